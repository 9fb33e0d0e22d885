/**
 * The query API's OpenAPI 3.1 document, generated from what the server runs
 * on: its routes (`ApiRoute`: pattern, query schema, response, errors), the
 * zod schemas its handlers parse queries with (`params.ts` and each
 * endpoint's), the response schemas (`schemas.ts`) and the one table of
 * error codes to statuses (`http/responses.ts`). Served at
 * {@link OPENAPI_PATH} without a key and committed as `docs/openapi.json`
 * (`deno task openapi`).
 *
 * @module
 */
import { z } from "zod";
import { ERROR_STATUS, type ErrorCode, NDJSON_TYPE } from "../http/responses.ts";
import type { ApiRoute, ApiTag } from "./context.ts";
import { COMPONENTS, ERROR_BODIES, Health, NotReady, OpenApiDocument, Ready } from "./schemas.ts";

/** Where the document is served. */
export const OPENAPI_PATH = "/v1/openapi.json";

type Json = Record<string, unknown>;

/** What the groups of operations hold. */
const TAGS: Record<ApiTag, string> = {
  "service": "The service itself: liveness, readiness, version and this document.",
  "sessions": "Sessions: runs of a coding agent, built from the tool calls they reported.",
  "tool-calls": "Tool calls, one by one.",
  "insights":
    "Rollups over a window of 7, 30 or 90 days ending now, in the insight envelope (`window`, `summary`, `series`, `breakdown`).",
  "unmapped-events": "What the organization's agents sent that stored nothing (an extension).",
  "fleet":
    "The organization's actors: when each was last seen, which agents and versions it runs, what of its telemetry the server did not understand (an extension).",
  "export":
    "Bulk export (an extension): every tool call or session of a window as NDJSON, oldest first, streamed in constant memory and resumable from any line.",
};

/** Every route behind the key may answer these. */
const KEYED_ERRORS: readonly ErrorCode[] = ["unauthenticated", "keystore_unavailable", "internal"];

/** The paths answered without a key, outside the router, and what they answer. */
const OPEN_OPERATIONS: readonly {
  path: string;
  summary: string;
  description: string;
  responses: Readonly<Record<number, z.ZodType>>;
}[] = [
  {
    path: "/healthz",
    summary: "Liveness",
    description: "No key needed. 200 while the service is up.",
    responses: { 200: Health },
  },
  {
    path: "/readyz",
    summary: "Readiness (an extension)",
    description:
      "No key needed. 200 when both stores are writable and a query answers, else 503 with the reason (e.g. a full disk, an unreachable database, the analytics replica unable to write).",
    responses: { 200: Ready, 503: NotReady },
  },
  {
    path: OPENAPI_PATH,
    summary: "This document (an extension)",
    description:
      "No key needed. The OpenAPI 3.1 document of this API, generated from the route and schema definitions the server validates with.",
    responses: { 200: OpenApiDocument },
  },
];

const INFO_DESCRIPTION = [
  "A read-only JSON API over an organization's AI coding-agent telemetry: sessions, tool calls and rollups. It implements the Telemetry Query API specification; what it adds is marked as an extension.",
  "",
  "Every `/v1/` request but this document carries `Authorization: Bearer wb_api_…` (an organization API key; exactly `Bearer`, one space, the key). A key reads all of its organization's telemetry and nothing of another's: another organization's session or tool call is 404.",
  "",
  'Checks come in this order: an unknown path is 404 with the plain text `404 page not found`; a method other than GET on a known path is 405 with the plain text `Method Not Allowed`; then the key (401/503); then the query parameters (400); then the lookup (404). A URL over 8 KiB is 414, headers over 16 KiB are 431 (plain text). Every other error is JSON: `{"error":{"code","message"}}`.',
  "",
  "Timestamps are RFC 3339 in UTC with milliseconds. Optional fields are left out when empty. A filter sent empty is no filter, a repeated single-valued parameter takes its first value, and unknown parameters are ignored. Costs are rounded to 1e-9 USD, averages and percentiles to 1e-6.",
].join("\n");

/** The OpenAPI 3.1 document of `routes` (the router's) and the open paths. */
export function openApiDocument(routes: readonly ApiRoute[], version: string): Json {
  const paths: Json = {};
  for (const route of routes) {
    paths[openApiPath(route.pattern)] = { get: keyedOperation(route) };
  }
  for (const open of OPEN_OPERATIONS) {
    paths[open.path] = {
      get: {
        operationId: operationId(open.path),
        tags: ["service"],
        summary: open.summary,
        description: open.description,
        security: [],
        responses: Object.fromEntries(
          Object.entries(open.responses).map(([status, body]) => [status, jsonBody(body)]),
        ),
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent Telemetry query API",
      version,
      description: INFO_DESCRIPTION,
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ apiKey: [] }],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "An organization API key (`wb_api_…`, from `agent-telemetry key create`). Actors' ingest keys are refused.",
        },
      },
    },
  };
}

/** `/v1/sessions/:id` as OpenAPI writes it: `/v1/sessions/{id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:(\w+)/g, "{$1}");
}

/** `getSessionsById` for `/v1/sessions/:id`, `getInsightsTopTools` for `/v1/insights/top-tools`. */
function operationId(pattern: string): string {
  const words = pattern.split("/").filter((segment) => segment !== "" && segment !== "v1")
    .flatMap((segment) =>
      segment.startsWith(":") ? ["by", segment.slice(1)] : segment.split(/[^A-Za-z0-9]+/)
    );
  return "get" + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
}

function keyedOperation(route: ApiRoute): Json {
  const parameters = [...pathParameters(route), ...queryParameters(route)];
  const responses: Json = {
    200: route.body === "ndjson" ? ndjsonBody(route.response) : jsonBody(route.response),
  };
  const given = new Set([...route.errors, ...KEYED_ERRORS]);
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => given.has(code));
  const statuses = [...new Set(codes.map((code) => ERROR_STATUS[code]))].sort((a, b) => a - b);
  for (const status of statuses) {
    responses[status] = errorResponse(codes.filter((code) => ERROR_STATUS[code] === status));
  }
  return {
    operationId: operationId(route.pattern),
    tags: [route.tag],
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(parameters.length === 0 ? {} : { parameters }),
    responses,
  };
}

function pathParameters(route: ApiRoute): Json[] {
  return [...route.pattern.matchAll(/:(\w+)/g)].map(([, name]) => {
    const description = route.pathParams?.[name!];
    if (description === undefined) {
      throw new Error(`Undescribed path parameter: "${name}" of ${route.pattern}`);
    }
    return { name, in: "path", required: true, description, schema: { type: "string" } };
  });
}

/**
 * The query schema's fields as parameters: each one's JSON Schema as a
 * client sends it (zod's input side, with the field's `meta`), its
 * description and deprecation lifted to the parameter, and its default the
 * value the field parses an absent parameter to.
 */
function queryParameters(route: ApiRoute): Json[] {
  if (route.query === undefined) return [];
  return Object.entries(route.query.shape).map(([name, field]) => {
    const { description, deprecated, ...schema } = jsonSchema(field as z.ZodType, "input");
    const absent = (field as z.ZodType).safeParse(undefined);
    if (absent.success && absent.data !== undefined) schema.default = absent.data;
    return {
      name,
      in: "query",
      required: false,
      ...(description === undefined ? {} : { description }),
      ...(deprecated === true ? { deprecated } : {}),
      schema,
    };
  });
}

/** A JSON response whose body is a component. */
function jsonBody(schema: z.ZodType): Json {
  return {
    description: descriptionOf(schema),
    content: { "application/json": { schema: { $ref: componentRef(schema) } } },
  };
}

/**
 * A stream of JSON lines (NDJSON) whose every line is a component: OpenAPI
 * 3.1 has no schema for one item of a sequential media type, so the stream
 * is described as the array of its lines (how OpenAPI 3.2 reads `schema` of
 * such a type).
 */
function ndjsonBody(item: z.ZodType): Json {
  return {
    description: `${
      descriptionOf(item)
    } One per line (NDJSON: the schema is that of the lines read as an array); no lines when nothing matches.`,
    content: { [NDJSON_TYPE]: { schema: { type: "array", items: { $ref: componentRef(item) } } } },
  };
}

/** The error response of a status, for its codes. */
function errorResponse(codes: readonly ErrorCode[]): Json {
  const refs = codes.map((code) => ({ $ref: componentRef(ERROR_BODIES[code]) }));
  const retry = codes.some((code) => ERROR_STATUS[code] === 503);
  return {
    description: codes.map((code) => descriptionOf(ERROR_BODIES[code])).join(" "),
    ...(retry
      ? {
        headers: {
          "Retry-After": {
            description: "Seconds to wait before retrying.",
            schema: { type: "integer", minimum: 0 },
          },
        },
      }
      : {}),
    content: {
      "application/json": { schema: refs.length === 1 ? refs[0] : { oneOf: refs } },
    },
  };
}

function descriptionOf(schema: z.ZodType): string {
  return z.globalRegistry.get(schema)?.description ?? "";
}

function componentRef(schema: z.ZodType): string {
  const id = COMPONENTS.get(schema)?.id;
  if (id === undefined) throw new Error("A response schema that is no component");
  return `#/components/schemas/${id}`;
}

/** Every component of `schemas.ts`, referring to one another. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(COMPONENTS, {
    uri: (id) => `#/components/schemas/${id}`,
    override: withoutSafeIntegerBounds,
  });
  if ("__shared" in schemas) throw new Error("A schema shared by components is no component");
  const out: Json = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _, $id: __, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

/** One schema's JSON Schema, without its `$schema`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io,
    override: withoutSafeIntegerBounds,
  }) as Json;
  return rest;
}

/** Drops the bounds zod writes on every integer (±2^53 − 1), which say nothing here. */
function withoutSafeIntegerBounds(context: { jsonSchema: Json }): void {
  const schema = context.jsonSchema;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
}
