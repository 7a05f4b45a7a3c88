// A real MCP client — the official TypeScript SDK (@modelcontextprotocol/sdk, installed pinned
// by scripts/test-deps.sh) — driving one MCP server over stdio, for crates/cli/tests/mcp_sdk.rs.
//
//   node client.cjs CONFIG_JSON
//
// CONFIG: { deps, command, args, cwd, env, elicitation: "accept" | "decline" | "hang" | null,
//           steps: [ {op: "list"}
//                  | {op: "call", tool, arguments, progress?: bool}
//                  | {op: "cancel", tool, arguments, after_progress: N}   // abort the call
//                  | {op: "wait_progress", count, timeout_ms} ] }  // for the last cancel

// Prints one JSON object on stdout: { tools, steps: [...], elicitations: [...], errors: [...] }.
// Every step's outcome is recorded (never thrown), so the Rust test asserts on all of them.
"use strict";

const config = JSON.parse(process.argv[2]);
const { createRequire } = require("node:module");
const sdk = createRequire(`${config.deps}/npm/package.json`);
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema, CallToolResultSchema } = sdk("@modelcontextprotocol/sdk/types.js");

function text(result) {
  return (result.content || [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

async function main() {
  const out = { tools: null, steps: [], elicitations: [], errors: [] };
  // Elicitation declared only when the scenario answers forms: a client without it.
  const capabilities = config.elicitation ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: "ts-sdk-test-client", version: "1.0.0" }, { capabilities });
  client.onerror = (e) => out.errors.push(String(e && e.message ? e.message : e));
  if (config.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      out.elicitations.push({
        message: request.params.message,
        choices: (request.params.requestedSchema.properties.decision.oneOf || []).map((o) => o.const),
      });
      if (config.elicitation === "hang") return new Promise(() => {}); // a person who never answers
      return config.elicitation === "accept"
        ? { action: "accept", content: { decision: "once" } }
        : { action: "decline" };
    });
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    cwd: config.cwd,
    env: config.env,
    stderr: "inherit",
  });
  await client.connect(transport);
  out.server = client.getServerVersion();
  // What reached the client, counted where the transport hands each message to the SDK: the
  // SDK runs a progress handler in a later microtask but settles a response at once, so a
  // call's last progress notification read in the same chunk as its answer never reaches
  // `onprogress` (the SDK's own ordering, under any wrapper or none).
  const delivered = new Map(); // progress token -> notifications received
  let lastToken = null; // the progress token of the last tools/call sent
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "tools/call") lastToken = message.params?._meta?.progressToken ?? null;
    return send(message, options);
  };
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "notifications/progress") {
      const token = message.params?.progressToken;
      delivered.set(token, (delivered.get(token) || 0) + 1);
    }
    return receive(message, extra);
  };
  let cancelToken = null;

  for (const step of config.steps) {
    if (step.op === "list") {
      const { tools } = await client.listTools();
      out.tools = tools.map((t) => t.name);
      out.steps.push({ op: "list", tools: out.tools });
    } else if (step.op === "call") {
      let progress = 0;
      const options = { timeout: 120000 };
      if (step.progress) options.onprogress = () => { progress += 1; };
      // Read after the call: it was the last tools/call sent (the steps run one at a time).
      const token = () => lastToken;
      try {
        const r = await client.callTool({ name: step.tool, arguments: step.arguments || {} }, CallToolResultSchema, options);
        out.steps.push({ op: "call", tool: step.tool, ok: true, isError: r.isError === true, text: text(r), progress, delivered: delivered.get(token()) || 0 });
      } catch (e) {
        out.steps.push({ op: "call", tool: step.tool, ok: false, code: e.code ?? null, error: String(e.message), progress, delivered: delivered.get(token()) || 0 });
      }
    } else if (step.op === "cancel") {
      // Aborting the SDK's request sends `notifications/cancelled` for it.
      const abort = new AbortController();
      let progress = 0;
      const options = {
        timeout: 120000,
        signal: abort.signal,
        onprogress: () => {
          progress += 1;
          if (progress >= step.after_progress) abort.abort("the test cancels it");
        },
      };
      const started = Date.now();
      try {
        const r = await client.callTool({ name: step.tool, arguments: step.arguments || {} }, CallToolResultSchema, options);
        out.steps.push({ op: "cancel", tool: step.tool, ok: true, text: text(r), progress });
      } catch (e) {
        out.steps.push({ op: "cancel", tool: step.tool, ok: false, error: String(e.message), progress, ms: Date.now() - started });
      }
      cancelToken = lastToken;
    } else if (step.op === "wait_progress") {
      // Until `count` progress notifications for the last cancelled call reached the client
      // (the server goes on after the cancellation), or the deadline.
      const until = Date.now() + step.timeout_ms;
      const seen = () => delivered.get(cancelToken) || 0;
      while (seen() < step.count && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      out.steps.push({ op: "wait_progress", found: seen() >= step.count, seen: seen() });
    } else {
      throw new Error(`unknown step ${step.op}`);
    }
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e && e.stack ? e.stack : e) }) + "\n");
  process.exit(1);
});
