/**
 * The scripted Gemini API the Gemini CLI scenarios run against
 * (`GOOGLE_GEMINI_BASE_URL`): each `POST …/models/<model>:streamGenerateContent`
 * gets the parts the scenario's script answers at the request's step (the
 * number of function responses it carries, so a retried request gets the same
 * answer), in one SSE chunk with the same fixed token usage. Anything else is
 * a 404, and noted: the scripts expect none.
 *
 * @module
 */
import { type LoopbackServer, serveLoopback } from "./_loopback.ts";

/**
 * The model the client is told to use, and the mock reports. An explicit
 * model: no routing classifier call (`auto` would add flash-lite calls).
 */
export const GEMINI_MODEL = "gemini-2.5-pro";

/**
 * Token usage of every response. Gemini semantics: the prompt count includes
 * the cached tokens; thoughts are outside the candidates count.
 */
export const GEMINI_USAGE = { prompt: 4000, cached: 1024, candidates: 60, thoughts: 25 };

/** A part of a request's contents or of an answer. */
export interface GeminiPart {
  text?: string;
  functionCall?: { name?: string; args?: Record<string, unknown> };
  functionResponse?: { name?: string; response?: unknown };
}

interface GeminiRequest {
  contents?: { role?: string; parts?: GeminiPart[] }[];
  tools?: { functionDeclarations?: { name?: string }[] }[];
}

/**
 * The parts answering the request at `step`, whose tools declare the
 * functions `declared`; what goes off script is added to `problems`.
 */
export type GeminiScript = (step: number, declared: string[], problems: string[]) => GeminiPart[];

/** A running mock Gemini API. */
export interface GeminiMock extends LoopbackServer {
  /** One line per model request: its step, declared functions and what it got. */
  log: string[];
  /** `streamGenerateContent` requests answered so far. */
  answered(): number;
  /** Other requests the client made (method and path). */
  unexpected: string[];
  /** What went off script. */
  problems: string[];
}

/** Starts the mock answering as `script` says; response ids are `<responseIdPrefix>NN`. */
export async function startGeminiMock(
  script: GeminiScript,
  responseIdPrefix: string,
): Promise<GeminiMock> {
  let answered = 0;
  const unexpected: string[] = [];
  const problems: string[] = [];
  const log: string[] = [];
  const server = await serveLoopback(async (request) => {
    const url = new URL(request.url);
    const body = await request.text();
    if (request.method !== "POST" || !url.pathname.endsWith(":streamGenerateContent")) {
      unexpected.push(`${request.method} ${url.pathname}`);
      return Response.json({ error: { code: 404, message: "Not scripted" } }, { status: 404 });
    }
    const parsed = JSON.parse(body) as GeminiRequest;
    const parts = (parsed.contents ?? []).flatMap((c) => c.parts ?? []);
    const responses = parts.filter((p) => p.functionResponse !== undefined);
    const step = responses.length;
    const declared = (parsed.tools ?? []).flatMap((t) => t.functionDeclarations ?? [])
      .map((d) => String(d.name));
    answered++;
    const answer = script(step, declared, problems);
    log.push(
      `step ${step}: declared [${declared.join(", ")}]; responses ${
        JSON.stringify(responses.map((p) => p.functionResponse)).slice(0, 1500)
      }; answered ${JSON.stringify(answer)}`,
    );
    const chunk = {
      candidates: [{ content: { role: "model", parts: answer }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: GEMINI_USAGE.prompt,
        cachedContentTokenCount: GEMINI_USAGE.cached,
        candidatesTokenCount: GEMINI_USAGE.candidates,
        thoughtsTokenCount: GEMINI_USAGE.thoughts,
        totalTokenCount: GEMINI_USAGE.prompt + GEMINI_USAGE.candidates + GEMINI_USAGE.thoughts,
      },
      modelVersion: GEMINI_MODEL,
      responseId: `${responseIdPrefix}${String(step).padStart(2, "0")}`,
    };
    return new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  });
  return { ...server, log, answered: () => answered, unexpected, problems };
}
