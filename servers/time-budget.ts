/**
 * Waiting for work at most a time budget while the work goes on: a read that may start a slow
 * outbound job (live merchant resolution, brand channel discovery) answers with what is known once
 * its budget is spent, and the job finishes in the background.
 */

/** The promise's value if it settles within `ms`, else undefined (the work goes on). */
export async function withinBudget<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
