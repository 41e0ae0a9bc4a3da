// Lists the host's tools with the official MCP TypeScript SDK over stdio,
// the way Claude Code and other TypeScript clients do. The SDK compiles each
// tool's outputSchema with Ajv while listing, and Ajv warns on the console
// about anything it does not know (such as `format: "uint32"`).
//
// Usage: node list_tools.mjs HOST_BINARY. Prints one JSON line:
// {"tools": N, "warnings": [...]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const warnings = [];
for (const level of ["warn", "error", "log"]) {
  console[level] = (...args) => warnings.push(args.map(String).join(" "));
}

const transport = new StdioClientTransport({
  command: process.argv[2],
  env: { ...process.env, COMPUTER_USE_OPEN: "none" },
  stderr: "ignore",
});
const client = new Client({ name: "typescript-sdk-test", version: "0" });
await client.connect(transport);
const { tools } = await client.listTools();
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.length, warnings }) + "\n");
