/**
 * An OpenAI-compatible chat-completions server on loopback, as OpenAI, Ollama, vLLM and llama.cpp
 * serve it: `POST /v1/chat/completions` with `{model, messages, response_format?}` answers a
 * `chat.completion` object (`id`, `object`, `created`, `model`, `choices[0].message.content`,
 * `finish_reason`, `usage`). The content is a fixed answer per model, chosen by the test; a 401
 * answers a wrong bearer key the way OpenAI does (`{error: {message, type, code}}`). It can be made
 * slow (a provider that does not answer in time) or to refuse `response_format` (a server without
 * structured outputs). Every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  authorization: string | undefined;
}

export interface TestLlmServer {
  /** Base URL for `base_url`: `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** The answer's content per model name: text, or a function of the request. */
  answers: Map<string, string | ((request: ChatRequest) => string)>;
  /** The bearer key accepted; null accepts any (a local server without keys). */
  apiKey: string | null;
  requests: ChatRequest[];
  delayMs: number;
  /** Answer 400 to requests that carry `response_format`, as servers without structured outputs do. */
  rejectResponseFormat: boolean;
  close(): Promise<void>;
}

export async function startLlmServer(): Promise<TestLlmServer> {
  const state: Pick<TestLlmServer, 'answers' | 'apiKey' | 'requests' | 'delayMs' | 'rejectResponseFormat'> = {
    answers: new Map(),
    apiKey: null,
    requests: [],
    delayMs: 0,
    rejectResponseFormat: false,
  };
  let counter = 0;
  const error = (res: http.ServerResponse, status: number, message: string, code: string) =>
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } }));

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        return error(res, 404, 'Unknown endpoint', 'unknown_url');
      }
      let body: Omit<ChatRequest, 'authorization'>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return error(res, 400, 'We could not parse the JSON body of your request.', 'invalid_json');
      }
      const request: ChatRequest = { ...body, authorization: req.headers.authorization };
      state.requests.push(request);
      const respond = () => {
        if (state.apiKey !== null && req.headers.authorization !== `Bearer ${state.apiKey}`) {
          return error(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
        }
        if (state.rejectResponseFormat && body.response_format) {
          return error(
            res,
            400,
            'Unrecognized request argument supplied: response_format',
            'invalid_request',
          );
        }
        const answer = state.answers.get(body.model);
        if (answer === undefined)
          return error(res, 404, `The model ${body.model} does not exist`, 'model_not_found');
        const content = typeof answer === 'function' ? answer(request) : answer;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-test${++counter}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
            system_fingerprint: 'fp_test',
          }),
        );
      };
      if (state.delayMs > 0) {
        const timer = setTimeout(respond, state.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
