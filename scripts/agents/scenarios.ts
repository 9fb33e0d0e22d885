/**
 * The registry of real-agent scenarios: the live harness (`main.ts`) runs
 * them and the replay test (`tests/agents_real_test.ts`) replays their
 * recordings. One line per agent.
 *
 * @module
 */
import type { AgentScenario } from "./_scenario.ts";
import { claudeCode } from "./claude_code.ts";
import { codexScenario } from "./codex.ts";
import { geminiCliScenario } from "./gemini_cli.ts";

/** Every registered scenario. */
export const SCENARIOS: AgentScenario[] = [
  claudeCode,
  codexScenario,
  geminiCliScenario,
];
