// A tiny MCP client speaking JSON-RPC over streamable HTTP, the way an agent talks to this server:
// POST /mcp with `Accept: application/json, text/event-stream`, answers read as plain JSON or as an
// SSE stream, the `Mcp-Session-Id` the server hands out on `initialize` sent back on every request
// (stateful servers), and the negotiated `MCP-Protocol-Version` after the handshake.

export const PROTOCOL_VERSION = "2025-11-25";
const REQUEST_TIMEOUT_MS = 30000;

/** A failed exchange: an HTTP status (401, 404, …) or a JSON-RPC error object. */
export class McpError extends Error {
  constructor(message, { status = 0, code = null, data = null } = {}) {
    super(message);
    this.name = "McpError";
    this.status = status;
    this.code = code;
    this.data = data;
  }
}

export class McpClient {
  /**
   * @param {string} endpoint URL of the MCP endpoint (`/mcp`).
   * @param {{clientInfo?: {name: string, version: string}, getToken?: () => (string|null)}} options
   */
  constructor(endpoint, { clientInfo = { name: "docs-mcp-playground", version: "1" }, getToken = () => null } = {}) {
    this.endpoint = endpoint;
    this.clientInfo = clientInfo;
    this.getToken = getToken;
    this.sessionId = null;
    this.protocolVersion = null;
    this.initializeResult = null;
    this.nextId = 1;
    this.connecting = null;
  }

  get connected() {
    return this.initializeResult !== null;
  }

  /** Run the `initialize` handshake (again, if a session expired). */
  async connect() {
    if (!this.connecting) {
      this.connecting = this.handshake().finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  async handshake() {
    this.sessionId = null;
    this.protocolVersion = null;
    this.initializeResult = null;
    const result = await this.exchange("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: this.clientInfo,
    });
    this.protocolVersion = result.protocolVersion || PROTOCOL_VERSION;
    await this.notify("notifications/initialized");
    this.initializeResult = result;
    return result;
  }

  /** One JSON-RPC request; re-initializes once when the server no longer knows the session. */
  async request(method, params) {
    if (!this.connected) await this.connect();
    try {
      return await this.exchange(method, params);
    } catch (err) {
      if (err instanceof McpError && err.status === 404 && this.sessionId) {
        await this.connect();
        return this.exchange(method, params);
      }
      throw err;
    }
  }

  callTool(name, args) {
    return this.request("tools/call", { name, arguments: args });
  }

  /** Every page of a paginated list method (`tools/list`, …), concatenated. */
  async listAll(method, key) {
    const items = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const result = await this.request(method, cursor ? { cursor } : {});
      items.push(...(result[key] || []));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return items;
  }

  async notify(method, params) {
    const body = { jsonrpc: "2.0", method };
    if (params !== undefined) body.params = params;
    const response = await this.post(body);
    if (!response.ok) throw await httpError(response);
    await response.body?.cancel();
  }

  /** End the session (stateful servers); best effort, also while the page unloads. */
  close() {
    if (!this.sessionId) return;
    const headers = this.headers();
    this.sessionId = null;
    this.initializeResult = null;
    fetch(this.endpoint, { method: "DELETE", headers, keepalive: true, credentials: "same-origin" }).catch(() => {});
  }

  headers() {
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    };
    if (this.sessionId) headers["Mcp-Session-Id"] = this.sessionId;
    if (this.protocolVersion) headers["MCP-Protocol-Version"] = this.protocolVersion;
    const token = this.getToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    return headers;
  }

  post(message) {
    return fetch(this.endpoint, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(message),
      credentials: "same-origin",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  }

  async exchange(method, params) {
    const id = this.nextId++;
    const message = { jsonrpc: "2.0", id, method };
    if (params !== undefined) message.params = params;
    const response = await this.post(message);
    if (!response.ok) throw await httpError(response);
    const session = response.headers.get("Mcp-Session-Id");
    if (session) this.sessionId = session;
    const reply = await readReply(response, id);
    if (reply.error) {
      throw new McpError(reply.error.message || "JSON-RPC error", { code: reply.error.code, data: reply.error.data });
    }
    return reply.result;
  }
}

async function httpError(response) {
  let message = `HTTP ${response.status}`;
  try {
    const text = await response.text();
    const parsed = JSON.parse(text);
    const detail = parsed?.error?.message || parsed?.error;
    if (typeof detail === "string") message += `: ${detail}`;
  } catch {
    // not JSON: the status says enough
  }
  return new McpError(message, { status: response.status });
}

/** The JSON-RPC response with `id`, from a JSON body or an SSE stream (other messages are skipped). */
async function readReply(response, id) {
  const type = (response.headers.get("Content-Type") || "").toLowerCase();
  if (type.includes("text/event-stream")) {
    for await (const message of sseMessages(response.body)) {
      if (message && message.id === id && ("result" in message || "error" in message)) return message;
    }
    throw new McpError("the event stream ended without an answer", { status: response.status });
  }
  const parsed = await response.json();
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  const reply = messages.find((m) => m && m.id === id);
  if (!reply) throw new McpError("the response did not answer the request", { status: response.status });
  return reply;
}

/** JSON messages carried by the `data:` fields of a server-sent event stream. */
async function* sseMessages(stream) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      // Normalise line ends; a trailing "\r" waits for the next chunk (it may start with "\n").
      const cut = !done && buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
      buffer = buffer.slice(0, cut).replace(/\r\n?/g, "\n") + buffer.slice(cut);
      let end;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data.trim()) yield JSON.parse(data);
      }
      if (done) return;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
