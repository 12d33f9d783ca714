/**
 * The part of the Claude Agent SDK's API the test uses. The SDK is installed
 * into .cache/ by scripts/install-agent-sdk.sh (it is not a dependency of the
 * package), after the typecheck has run, so its own declarations are not
 * there to import; these mirror them.
 */
export interface SDKUserMessage {
  type: "user";
  message: { role: "user"; content: string };
  parent_tool_use_id: null;
  session_id: string;
}

export type SDKMessage =
  | { type: "system"; subtype: string; cwd?: string; model?: string; permissionMode?: string }
  | { type: "assistant"; message: unknown }
  | { type: "user"; message: unknown }
  | { type: "stream_event"; event: unknown }
  | {
      type: "result";
      subtype: string;
      is_error: boolean;
      result?: string;
      modelUsage?: Record<string, unknown>;
      permission_denials?: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
    };

export type PermissionResult =
  | { behavior: "allow"; updatedInput: Record<string, unknown> }
  | { behavior: "deny"; message: string };

export interface Options {
  pathToClaudeCodeExecutable?: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
  systemPrompt?: string;
  model?: string;
  canUseTool?: (
    toolName: string,
    input: Record<string, unknown>,
    context: { toolUseID: string; signal: AbortSignal },
  ) => Promise<PermissionResult>;
  hooks?: Partial<Record<string, HookCallbackMatcher[]>>;
  mcpServers?: Record<string, unknown>;
  /** "argv": `--mcp-config` (the default of 0.3.x); "initialize": in the initialize request. */
  mcpServersDelivery?: "argv" | "initialize";
  allowedTools?: string[];
}

/** A hook's input as Claude Code sends it (`tool_name` in Claude Code's spelling). */
export type HookInput = Record<string, unknown> & { hook_event_name: string };

/** What a hook answers: the JSON a command hook would print. */
export type HookJSONOutput = Record<string, unknown>;

export interface HookCallbackMatcher {
  matcher?: string;
  hooks: Array<
    (
      input: HookInput,
      toolUseID: string | undefined,
      options: { signal: AbortSignal },
    ) => Promise<HookJSONOutput>
  >;
  /** Seconds. */
  timeout?: number;
  /** "block": a failing hook blocks; the SDK checks that the CLI honours it. */
  onFailure?: "continue" | "block";
}

export interface ModelInfo {
  value: string;
  resolvedModel?: string;
  displayName: string;
  description: string;
}

export interface McpServerStatus {
  name: string;
  status: string;
  serverInfo?: { name: string; version: string };
  error?: string;
  tools?: { name: string; description?: string }[];
}

export interface Query extends AsyncGenerator<SDKMessage, void> {
  interrupt(): Promise<void>;
  setModel(model?: string): Promise<void>;
  setPermissionMode(mode: string): Promise<{ mode: string } | undefined>;
  setMaxThinkingTokens(tokens: number | null): Promise<void>;
  mcpServerStatus(): Promise<McpServerStatus[]>;
  supportedModels(): Promise<ModelInfo[]>;
  supportedCommands(): Promise<Array<{ name: string; description: string }>>;
  accountInfo(): Promise<Record<string, unknown>>;
  getContextUsage(): Promise<unknown>;
}

export type QueryFunction = (parameters: {
  prompt: string | AsyncIterable<SDKUserMessage>;
  options?: Options;
}) => Query;

/** An MCP tool result, as an SDK MCP tool's handler returns it. */
export interface CallToolResult {
  content: Array<{ type: "text"; text: string }>;
  isError?: boolean;
}

/** The part of zod the tests write SDK tool schemas with (the SDK's own zod 4). */
export interface Zod {
  number(): unknown;
  string(): unknown;
}

/** The SDK's module: `query`, and in-process MCP servers (`createSdkMcpServer`, `tool`). */
export interface AgentSdk {
  query: QueryFunction;
  createSdkMcpServer(options: { name: string; version?: string; tools?: unknown[] }): unknown;
  tool(
    name: string,
    description: string,
    shape: Record<string, unknown>,
    handler: (input: Record<string, unknown>) => Promise<CallToolResult>,
  ): unknown;
  z: Zod;
}
