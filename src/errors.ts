/**
 * The base of every error a person fixes by changing the input: the CLI prints
 * its message as one line and exits with code 2.
 *
 * @module
 */

/** A refusal caused by the input (flags, configuration, ids), not by a fault. */
export class UserInputError extends Error {
  override name = "UserInputError";
}
