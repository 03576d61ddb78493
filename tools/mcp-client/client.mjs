// An independent MCP client for Strata's tests: the official TypeScript
// SDK (@modelcontextprotocol/sdk, pinned by package-lock.json) drives
// `searchd mcp` over stdio or `searchd serve`'s /mcp over streamable HTTP.
//
// usage: node client.mjs CONFIG_JSON
//
//   CONFIG_JSON = {"transport":"stdio","command":"…","args":[…],"env":{…}}
//               | {"transport":"http","url":"http://127.0.0.1:PORT/mcp","key":"…"}
//     plus "steps": [{"op":"list"}
//                   | {"op":"call","name":"search","args":{…}}
//                   | {"op":"cancel","name":"search","args":{…},"after_ms":50}
//                   | {"op":"job","name":"job","args":{"kind":"flush"},"timeout_ms":20000}]
//
// It prints one JSON object: {"protocol_version":…, "results":[…]}, a
// result per step: list → {"tools":[…]}; call → the CallToolResult as
// received (the SDK has already checked structuredContent against the
// tool's outputSchema; a mismatch is reported as {"error":…}); cancel →
// {"cancelled":true,"error":…} when the call was aborted (the SDK sends
// notifications/cancelled), then the next step shows the session is
// still usable; job → {"result":…,"notification":…}: it sets the logging
// level to info, calls the job tool to start a job and waits for the notifications/message
// whose data.job_id is the returned job_id (the job's completion), or
// {"result":…,"error":"timeout"}. A connection failure exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const cfg = JSON.parse(process.argv[2]);
let transport;
if (cfg.transport === "stdio") {
  transport = new StdioClientTransport({ command: cfg.command, args: cfg.args ?? [], env: { ...process.env, ...(cfg.env ?? {}) }, stderr: "inherit" });
} else {
  const headers = cfg.key ? { Authorization: `Bearer ${cfg.key}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers } });
}
// The client tells the transport the negotiated revision (HTTP needs it
// for its headers); record it for every transport.
let negotiated = null;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  negotiated = v;
  setVersion?.(v);
};
const client = new Client({ name: "strata-ts-test", version: "1.0.0" });
await client.connect(transport);
// Logging notifications, for job steps: job_id → the notification.
const jobNotes = new Map();
const jobWaiters = new Map();
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  const id = n.params?.data?.job_id;
  if (!id) return;
  jobNotes.set(id, n.params);
  jobWaiters.get(id)?.(n.params);
});

const results = [];
for (const step of cfg.steps) {
  try {
    if (step.op === "list") {
      results.push(await client.listTools());
    } else if (step.op === "call") {
      results.push(await client.callTool({ name: step.name, arguments: step.args ?? {} }));
    } else if (step.op === "cancel") {
      const ac = new AbortController();
      setTimeout(() => ac.abort("test cancels"), step.after_ms ?? 50);
      try {
        const r = await client.callTool({ name: step.name, arguments: step.args ?? {} }, undefined, { signal: ac.signal });
        results.push({ cancelled: false, result: r });
      } catch (e) {
        results.push({ cancelled: ac.signal.aborted, error: String(e?.message ?? e) });
      }
    } else if (step.op === "job") {
      await client.setLoggingLevel("info");
      const r = await client.callTool({ name: step.name, arguments: step.args ?? {} });
      const id = r.structuredContent?.job_id;
      const note = await new Promise((resolve) => {
        if (jobNotes.has(id)) return resolve(jobNotes.get(id));
        jobWaiters.set(id, resolve);
        setTimeout(() => resolve(null), step.timeout_ms ?? 20000);
      });
      results.push(note ? { result: r, notification: note } : { result: r, error: "timeout" });
    } else {
      results.push({ error: `unknown op ${step.op}` });
    }
  } catch (e) {
    results.push({ error: String(e?.message ?? e), code: e?.code });
  }
}
process.stdout.write(JSON.stringify({ protocol_version: negotiated, results }) + "\n");
await client.close();
process.exit(0);
