/**
 * Readers of OTLP/JSON shared by the logs/traces decoder (`_json.ts`) and the
 * metrics decoder (`../metrics/_decode_json.ts`): field access in both
 * spellings, `AnyValue`s, attributes, integers, doubles and fixed64 times,
 * each refusing a wrong shape with an {@link OtlpDecodeError}.
 *
 * @module
 */
import { TIME_MAX_NS, TIME_NOT_FIXED64 } from "../limits.ts";
import { mayHoldNul } from "../nul_policy.ts";
import type { Attributes, AttributeValue } from "../../model/telemetry.ts";
import { OtlpDecodeError } from "./_errors.ts";
import { hexOf } from "./_hex.ts";
import { MAX_VALUE_DEPTH, setAttribute } from "./_record.ts";

/** A parsed JSON object. */
export type JsonObject = { [key: string]: unknown };

const utf8 = new TextDecoder("utf-8", { fatal: true });

const EMPTY: readonly unknown[] = [];
const DECIMAL_INTEGER = /^-?[0-9]+$/;
const UNSIGNED_INTEGER = /^[0-9]+$/;
/** Digits of the largest fixed64, 18446744073709551615. */
const FIXED64_DIGITS = 20;
/** Integers above this double are certainly above 2^64−1. */
const MAX_FIXED64_NUMBER = 2 ** 64;

/** Parses a UTF-8 JSON body into an object; anything else is an {@link OtlpDecodeError}. */
export function parseJsonObject(bytes: Uint8Array): JsonObject {
  return parseJsonText(utf8Text(bytes));
}

/**
 * {@link parseJsonObject}, and whether the body's text {@link mayHoldNul}:
 * when it does not, neither does any string it holds.
 */
export function parseJsonBody(bytes: Uint8Array): { root: JsonObject; nulPossible: boolean } {
  const text = utf8Text(bytes);
  return { root: parseJsonText(text), nulPossible: mayHoldNul(text) };
}

function utf8Text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw invalidJson(error);
  }
}

function parseJsonText(text: string): JsonObject {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw invalidJson(error);
  }
  if (!isObject(root)) throw shapeError("the body is not a JSON object");
  return root;
}

function invalidJson(error: unknown): OtlpDecodeError {
  return new OtlpDecodeError(
    `Invalid OTLP JSON: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** Reads `owner.attributes` (a list of `{key, value}`) into `into`. */
export function attributesInto(into: Attributes, owner: JsonObject): void {
  for (const entry of arrayAt(owner, "attributes", "attributes")) keyValueInto(into, entry, 0);
}

function keyValueInto(into: Attributes, entry: unknown, depth: number): void {
  const keyValue = objectOf(entry, "attribute");
  const key = keyValue.key;
  if (typeof key !== "string") throw shapeError('an attribute "key" is not a string');
  setAttribute(into, key, anyValue(keyValue.value, depth));
}

/** An `AnyValue` object as a plain value; `{}`, null or absent → null; bytes become hex. */
export function anyValue(value: unknown, depth: number): AttributeValue {
  if (value == null) return null;
  const any = objectOf(value, "value");
  for (const kind in any) {
    const inner = any[kind];
    if (inner == null) continue;
    switch (kind) {
      case "stringValue":
      case "string_value":
        if (typeof inner !== "string") throw shapeError('"stringValue" is not a string');
        return inner;
      case "intValue":
      case "int_value":
        return intOf(inner, "intValue");
      case "boolValue":
      case "bool_value":
        if (typeof inner !== "boolean") throw shapeError('"boolValue" is not a boolean');
        return inner;
      case "doubleValue":
      case "double_value":
        return doubleOf(inner, "doubleValue");
      case "arrayValue":
      case "array_value": {
        if (depth >= MAX_VALUE_DEPTH) {
          throw shapeError(`values nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        const values = arrayAt(objectOf(inner, kind), "values", "values");
        const array: AttributeValue[] = new Array(values.length);
        for (let i = 0; i < values.length; i++) array[i] = anyValue(values[i], depth + 1);
        return array;
      }
      case "kvlistValue":
      case "kvlist_value": {
        if (depth >= MAX_VALUE_DEPTH) {
          throw shapeError(`values nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        const list: Attributes = {};
        for (const entry of arrayAt(objectOf(inner, kind), "values", "values")) {
          keyValueInto(list, entry, depth + 1);
        }
        return list;
      }
      case "bytesValue":
      case "bytes_value":
        if (typeof inner !== "string") throw shapeError('"bytesValue" is not a string');
        return hexOf(base64Bytes(inner));
    }
  }
  return null;
}

/** An int64 (or uint64): a number when safe, else the integer's decimal string. */
export function intOf(value: unknown, what: string): number | string {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
  } else if (typeof value === "string" && DECIMAL_INTEGER.test(value)) {
    const number = Number(value);
    if (Number.isSafeInteger(number)) return number;
    // Past int64's 20 characters the text stays as sent (no quadratic bigint
    // parse); the limits find it out of range.
    return value.length <= 20 ? BigInt(value).toString() : value;
  }
  throw shapeError(`"${what}" is not an integer: ${preview(value)}`);
}

/** A double: a number, or its text (`"NaN"`, `"Infinity"` as proto3 JSON writes them). */
export function doubleOf(value: unknown, what: string): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "") {
    const number = Number(value);
    if (!Number.isNaN(number) || value === "NaN") return number;
  }
  throw shapeError(`"${what}" is not a number: ${preview(value)}`);
}

/**
 * A fixed64 nanosecond time, sent as a decimal string or a number; null when
 * absent or 0. A larger integer is read as TIME_NOT_FIXED64, which rejects
 * its record (not the export), without a bigint of a text of any length.
 */
export function timeOf(value: unknown): bigint | null {
  if (value == null) return null;
  let time: bigint;
  if (typeof value === "string" && UNSIGNED_INTEGER.test(value)) {
    time = value.length <= FIXED64_DIGITS ? BigInt(value) : bigDecimal(value);
  } else if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    time = value <= MAX_FIXED64_NUMBER ? BigInt(value) : TIME_NOT_FIXED64;
  } else throw shapeError(`a time is not a non-negative integer: ${preview(value)}`);
  if (time > TIME_MAX_NS) return TIME_NOT_FIXED64;
  return time === 0n ? null : time;
}

/** A decimal text longer than any fixed64: its value when leading zeros hid a small one. */
function bigDecimal(digits: string): bigint {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 0x30) i++;
  return digits.length - i <= FIXED64_DIGITS ? BigInt(digits.slice(i)) : TIME_NOT_FIXED64;
}

/** Standard or URL-safe base64, padding optional. */
export function base64Bytes(text: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    throw shapeError(`not hex or base64: ${preview(text)}`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A value for an error message: at most 40 characters of its JSON. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `owner[camel]`, else `owner[snake]`; OTLP/JSON receivers accept both spellings. */
export function field(owner: JsonObject, camel: string, snake: string): unknown {
  return owner[camel] ?? owner[snake];
}

export function objectOf(value: unknown, name: string): JsonObject {
  if (!isObject(value)) throw shapeError(`an item of "${name}" is not an object`);
  return value;
}

export function objectAt(owner: JsonObject, camel: string, snake: string): JsonObject | null {
  const value = field(owner, camel, snake);
  if (value == null) return null;
  if (!isObject(value)) throw shapeError(`"${camel}" is not an object`);
  return value;
}

export function arrayAt(owner: JsonObject, camel: string, snake: string): readonly unknown[] {
  const value = field(owner, camel, snake);
  if (value == null) return EMPTY;
  if (!Array.isArray(value)) throw shapeError(`"${camel}" is not an array`);
  return value;
}

export function stringAt(owner: JsonObject, camel: string, snake: string): string {
  const value = field(owner, camel, snake);
  if (value == null) return "";
  if (typeof value !== "string") throw shapeError(`"${camel}" is not a string`);
  return value;
}

/** An {@link OtlpDecodeError} for a body of the wrong shape. */
export function shapeError(detail: string): OtlpDecodeError {
  return new OtlpDecodeError(`Invalid OTLP JSON: ${detail}`);
}
