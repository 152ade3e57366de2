/**
 * The OpenAI-compatible language model provider against an OpenAI-compatible server on loopback:
 * structured output asked with `response_format: json_schema`, the lenient reading of answers from
 * servers without it, and failures (wrong key, no answer in time, an answer off the schema) as
 * errors that name the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../servers/config.ts';
import {
  LanguageModelError,
  languageModelStatus,
  languageModelsOf,
  OpenAiCompatibleModel,
  parseJsonLeniently,
} from '../../servers/outbound/llm.ts';
import { startLlmServer, type TestLlmServer } from '../helpers/llm-server.ts';

const Answer = z.object({ name: z.string(), founded: z.string().nullable() });

describe('OpenAI-compatible language model provider', () => {
  let server: TestLlmServer;
  const modelOf = (model: string, apiKey: string | null = 'sk-test', timeoutMs = 5000) =>
    new OpenAiCompatibleModel({ name: 'test-llm', baseUrl: server.url, model, apiKey, timeoutMs });
  const ask = (model: OpenAiCompatibleModel) =>
    model.structured({
      system: 'You describe companies.',
      user: 'Describe Acme.',
      schemaName: 'entity',
      schema: Answer,
    });

  beforeAll(async () => {
    server = await startLlmServer();
    server.apiKey = 'sk-test';
    server.answers.set('exact', JSON.stringify({ name: 'Acme', founded: '2012' }));
    server.answers.set(
      'chatty',
      'Sure! Here it is:\n```json\n{"name": "Acme", "founded": null}\n```\nHope it helps.',
    );
    server.answers.set('off-schema', JSON.stringify({ name: 42 }));
    server.answers.set('prose', 'Acme is a company.');
  });
  afterAll(() => server?.close());

  it('asks for a json_schema structured output with the key as a bearer token, and validates the answer', async () => {
    const before = server.requests.length;
    const answer = await ask(modelOf('exact'));
    expect(answer.value).toEqual({ name: 'Acme', founded: '2012' });
    expect(answer.raw).toBe('{"name":"Acme","founded":"2012"}');
    const request = server.requests[before];
    expect(request?.authorization).toBe('Bearer sk-test');
    expect(request?.response_format?.type).toBe('json_schema');
    expect(request?.response_format?.json_schema).toMatchObject({
      name: 'entity',
      strict: true,
      schema: { type: 'object', required: ['name', 'founded'] },
    });
    expect(request?.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('reads JSON out of prose and fences, and asks again without response_format when a server refuses it', async () => {
    expect((await ask(modelOf('chatty'))).value).toEqual({ name: 'Acme', founded: null });
    server.rejectResponseFormat = true;
    try {
      const before = server.requests.length;
      expect((await ask(modelOf('exact'))).value.name).toBe('Acme');
      expect(server.requests.slice(before).map((r) => r.response_format?.type ?? null)).toEqual([
        'json_schema',
        null,
      ]);
    } finally {
      server.rejectResponseFormat = false;
    }
  });

  it('fails naming the provider: wrong key, off-schema answer, no JSON, no answer in time', async () => {
    await expect(ask(modelOf('exact', 'sk-wrong'))).rejects.toThrow(/test-llm: the server answered 401/);
    await expect(ask(modelOf('off-schema'))).rejects.toThrow(/does not follow the schema/);
    await expect(ask(modelOf('prose'))).rejects.toThrow(/no JSON object/);
    server.delayMs = 1500;
    try {
      const failure = await ask(modelOf('exact', 'sk-test', 200)).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(LanguageModelError);
      expect((failure as LanguageModelError).timedOut).toBe(true);
      expect((failure as Error).message).toMatch(/no answer within 200 ms/);
    } finally {
      server.delayMs = 0;
    }
  });

  it('parses leniently only JSON objects', () => {
    expect(parseJsonLeniently('{"a": "}"} trailing')).toEqual({ a: '}' });
    expect(parseJsonLeniently('[1, 2]')).toBeUndefined();
    expect(parseJsonLeniently('nothing')).toBeUndefined();
  });

  it('is configured by research.llm.providers, each usable when its key variable is set (or it names none)', () => {
    const config = loadConfig({
      env: {
        RESEARCH_LLM_PROVIDERS: JSON.stringify([
          { name: 'cloud', base_url: server.url, model: 'exact', api_key_env: 'TEST_LLM_KEY' },
          { name: 'local', base_url: server.url, model: 'exact', api_key_env: null },
        ]),
      },
    });
    expect(languageModelsOf(config, {}).map((m) => m.name)).toEqual(['local']);
    expect(languageModelsOf(config, { TEST_LLM_KEY: 'k' }).map((m) => m.name)).toEqual(['cloud', 'local']);
    expect(languageModelStatus(config, {})).toEqual([
      { kind: 'llm', name: 'cloud', configured: false, reason: expect.stringContaining('TEST_LLM_KEY') },
      { kind: 'llm', name: 'local', configured: true },
    ]);
    expect(() =>
      loadConfig({
        env: {
          RESEARCH_LLM_PROVIDERS: JSON.stringify([
            { name: 'a', base_url: 'not a url', model: 'm', api_key_env: 'sk-literal-key!' },
          ]),
        },
      }),
    ).toThrow(/research\.llm\.providers\.0\.base_url[\s\S]*research\.llm\.providers\.0\.api_key_env/);
  });
});
