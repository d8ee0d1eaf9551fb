/**
 * A copy-paste `curl` reproduction of a request the fuzzer sent: the method, the request
 * target exactly as sent (`--request-target`, `--path-as-is`), the headers in order, and the
 * body byte for byte (through base64 when it is not plain text). What curl cannot send the
 * same way (a body in pieces, a reset connection, bytes HTTP forbids) is said in a comment.
 */

/** Bodies up to this size are written into the command; larger ones are described. */
const MAX_INLINE_BODY = 256 * 1024;

export interface CurlRequest {
  method: string;
  /** `http://host:port`, where the request went. */
  origin: string;
  /** The request target as sent (latin1 bytes). */
  target: string;
  headers: [string, string][];
  body: Buffer;
  /** How curl's request differs from what was sent, if it does. */
  caveat?: string;
}

export function curlCommand(request: CurlRequest): string {
  const parts = ["curl", "-sS", "-i", "--path-as-is"];
  if (request.method !== "GET" || request.body.length > 0) parts.push("-X", quote(request.method));
  const relative = request.target.startsWith("/");
  const url = relative ? `${request.origin}${request.target}` : request.origin;
  if (!relative || !/^[\x21-\x7e]*$/.test(request.target)) parts.push("--request-target", quote(request.target));
  for (const [name, value] of request.headers) {
    // curl sets Host and Content-Length itself unless told otherwise; an empty value needs `Name;`.
    parts.push("-H", quote(value === "" ? `${name};` : `${name}: ${value}`));
  }
  let stdin = "";
  if (request.body.length > MAX_INLINE_BODY) {
    parts.push("--data-binary", quote(`<${request.body.length} bytes: replay with the seed to send them>`));
  } else if (request.body.length > 0) {
    const text = request.body.toString("utf8");
    const plain = Buffer.from(text, "utf8").equals(request.body) && /^[\t\n\r\x20-\x7e\u00a0-\uffff]*$/.test(text);
    if (plain) parts.push("--data-binary", quote(text));
    else {
      stdin = `printf %s ${quote(request.body.toString("base64"))} | base64 -d | `;
      parts.push("--data-binary", "@-");
    }
  }
  parts.push(quote(url));
  const command = `${stdin}${parts.join(" ")}`;
  return request.caveat ? `# ${request.caveat}\n${command}` : command;
}

/** A shell word in single quotes. */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
