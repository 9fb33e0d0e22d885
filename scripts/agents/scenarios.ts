/**
 * The registry of real-agent scenarios: the live harness (`main.ts`) runs
 * them and the replay test (`tests/agents_real_test.ts`) replays their
 * recordings. One line per scenario (and per recorded release of it).
 *
 * @module
 */
import type { AgentScenario } from "./_scenario.ts";
import { claudeCode } from "./claude_code.ts";
import { claudeCodeLong } from "./claude_code_long.ts";
import { claudeCodeMcp, claudeCodeMcpAt } from "./claude_code_mcp.ts";
import { codexScenario } from "./codex.ts";
import { codexLong } from "./codex_long.ts";
import { codexMcp, codexMcpAt } from "./codex_mcp.ts";
import { geminiCliScenario } from "./gemini_cli.ts";
import { geminiCliMcp } from "./gemini_cli_mcp.ts";

/** Every registered scenario. */
export const SCENARIOS: AgentScenario[] = [
  claudeCode,
  claudeCodeMcp,
  // The release that began to report its model requests as GenAI `chat` spans.
  claudeCodeMcpAt("2.1.332"),
  claudeCodeLong,
  codexScenario,
  codexMcp,
  codexMcpAt("0.171.0"),
  codexLong,
  geminiCliScenario,
  geminiCliMcp,
];
