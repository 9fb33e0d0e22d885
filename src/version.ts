/** The service's version, reported by `version` and `/v1/ping`. */
export const VERSION = "0.1.0";
