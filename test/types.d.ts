// Tests read JSON bodies whose shape the assertions check; `any` keeps them readable.
declare global {
  interface Response {
    // biome-ignore lint/suspicious/noExplicitAny: see above
    json(): Promise<any>;
  }
}

export {};
