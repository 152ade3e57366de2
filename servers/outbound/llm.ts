/**
 * Language models behind one interface: any OpenAI-compatible chat-completions endpoint (OpenAI,
 * a local Ollama, vLLM or llama.cpp server, a gateway), called with the official `openai` client.
 * Each provider is configured by the operator (`research.llm.providers[]`), so it is called with an
 * ordinary fetch like the search provider; its key comes from the environment variable the
 * configuration names, never from a file.
 *
 * Answers are asked for as structured output (`response_format: {type: "json_schema"}`, OpenAI's
 * Structured Outputs); a server that refuses that parameter (400) is asked again without it, and
 * any answer is read leniently (a JSON object inside prose or a markdown fence) before it is
 * validated against the same zod schema the JSON Schema came from.
 */
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError, BadRequestError } from 'openai';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { ProviderStatus } from './search.ts';

/** A provider failed: no answer in time, an HTTP error, or an answer that is not the JSON asked for. */
export class LanguageModelError extends Error {
  readonly provider: string;
  readonly timedOut: boolean;
  constructor(provider: string, message: string, options: { timedOut?: boolean; cause?: unknown } = {}) {
    super(`${provider}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LanguageModelError';
    this.provider = provider;
    this.timedOut = options.timedOut ?? false;
  }
}

export interface StructuredRequest<T extends z.ZodType> {
  system: string;
  user: string;
  /** `response_format.json_schema.name`: a-z, A-Z, 0-9, `_` and `-`. */
  schemaName: string;
  schema: T;
  signal?: AbortSignal;
}

export interface StructuredAnswer<T> {
  value: T;
  /** The model's text as it came, for citing. */
  raw: string;
  /** The model the server says answered (it may differ from the one asked, behind a gateway). */
  model: string;
}

export interface LanguageModel {
  /** The configured name (`openai`, `local-llama`): what answers and findings cite. */
  readonly name: string;
  readonly model: string;
  structured<T extends z.ZodType>(request: StructuredRequest<T>): Promise<StructuredAnswer<z.output<T>>>;
}

export interface OpenAiCompatibleOptions {
  name: string;
  baseUrl: string;
  model: string;
  /** null for servers without authentication (a local Ollama). */
  apiKey: string | null;
  timeoutMs: number;
}

/** Largest answer read; a description is a few hundred tokens. */
const MAX_TOKENS = 1200;

export class OpenAiCompatibleModel implements LanguageModel {
  readonly name: string;
  readonly model: string;
  readonly #client: OpenAI;
  readonly #timeoutMs: number;

  constructor(options: OpenAiCompatibleOptions) {
    this.name = options.name;
    this.model = options.model;
    this.#timeoutMs = options.timeoutMs;
    this.#client = new OpenAI({
      baseURL: options.baseUrl,
      // The client refuses to start without a key; keyless local servers ignore the header.
      apiKey: options.apiKey ?? 'no-key',
      timeout: options.timeoutMs,
      // One attempt within the time budget: a paid request must answer, not retry for minutes.
      maxRetries: 0,
    });
  }

  async structured<T extends z.ZodType>(
    request: StructuredRequest<T>,
  ): Promise<StructuredAnswer<z.output<T>>> {
    const jsonSchema = z.toJSONSchema(request.schema, { io: 'output' }) as Record<string, unknown>;
    delete jsonSchema.$schema;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: request.system },
      {
        role: 'user',
        content: `${request.user}\n\nAnswer with one JSON object only, following this JSON Schema:\n${JSON.stringify(jsonSchema)}`,
      },
    ];
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      try {
        completion = await this.#client.chat.completions.create(
          {
            model: this.model,
            messages,
            temperature: 0,
            max_tokens: MAX_TOKENS,
            response_format: {
              type: 'json_schema',
              json_schema: { name: request.schemaName, schema: jsonSchema, strict: true },
            },
          },
          { signal },
        );
      } catch (err) {
        // Servers without Structured Outputs refuse the parameter; the prompt carries the schema.
        if (!(err instanceof BadRequestError)) throw err;
        completion = await this.#client.chat.completions.create(
          { model: this.model, messages, temperature: 0, max_tokens: MAX_TOKENS },
          { signal },
        );
      }
    } catch (err) {
      throw this.#failure(err, timeout);
    }
    const choice = completion.choices[0];
    const raw = choice?.message.content ?? '';
    if (choice?.message.refusal) {
      throw new LanguageModelError(this.name, `the model refused: ${choice.message.refusal.slice(0, 200)}`);
    }
    const json = parseJsonLeniently(raw);
    const parsed = json === undefined ? null : request.schema.safeParse(json);
    if (!parsed?.success) {
      throw new LanguageModelError(
        this.name,
        json === undefined
          ? 'the answer holds no JSON object'
          : `the answer does not follow the schema (${z.prettifyError((parsed as z.ZodSafeParseError<unknown>).error).slice(0, 300)})`,
      );
    }
    return { value: parsed.data as z.output<T>, raw, model: completion.model || this.model };
  }

  #failure(err: unknown, timeout: AbortSignal): LanguageModelError {
    if (err instanceof APIConnectionTimeoutError || (err instanceof APIUserAbortError && timeout.aborted)) {
      return new LanguageModelError(this.name, `no answer within ${this.#timeoutMs} ms`, {
        timedOut: true,
        cause: err,
      });
    }
    if (err instanceof APIError && err.status !== undefined) {
      return new LanguageModelError(this.name, `the server answered ${err.status}`, { cause: err });
    }
    return new LanguageModelError(this.name, `could not be reached (${(err as Error).message})`, {
      cause: err,
    });
  }
}

/**
 * The JSON object in a model's text: the whole text, else the inside of a ```json fence, else the
 * first balanced `{...}` (models without structured output wrap JSON in prose). undefined if none.
 */
export function parseJsonLeniently(text: string): unknown {
  const attempts = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]) attempts.push(fenced[1].trim());
  const start = text.indexOf('{');
  if (start >= 0) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        attempts.push(text.slice(start, i + 1));
        break;
      }
    }
  }
  for (const attempt of attempts) {
    try {
      const value: unknown = JSON.parse(attempt);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
      // the next reading
    }
  }
  return undefined;
}

/** Each configured provider with whether it is usable: its key variable set, when it names one. */
export function languageModelStatus(config: Config, env: NodeJS.ProcessEnv = process.env): ProviderStatus[] {
  return config.research.llm.providers.map((p) =>
    p.api_key_env === null || env[p.api_key_env]?.trim()
      ? { kind: 'llm', name: p.name, configured: true }
      : {
          kind: 'llm',
          name: p.name,
          configured: false,
          reason: `the environment variable ${p.api_key_env} (its api_key_env) is not set`,
        },
  );
}

/** The usable configured providers, in configuration order. */
export function languageModelsOf(config: Config, env: NodeJS.ProcessEnv = process.env): LanguageModel[] {
  const { providers, timeout_ms: timeoutMs } = config.research.llm;
  const models: LanguageModel[] = [];
  for (const p of providers) {
    const apiKey = p.api_key_env === null ? null : env[p.api_key_env]?.trim() || undefined;
    if (apiKey === undefined) continue;
    models.push(
      new OpenAiCompatibleModel({ name: p.name, baseUrl: p.base_url, model: p.model, apiKey, timeoutMs }),
    );
  }
  return models;
}
