/**
 * Servers a test starts on 127.0.0.1 at a port the system picks, and a free port for a child
 * process that must be told its port before it starts.
 */
import { once } from "node:events";
import type http from "node:http";
import net from "node:net";

/** A listening server: where it is, and how to stop it. */
export interface Listening {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Ends open connections (streams a test left hanging included) and waits until the server is closed. */
  close(): Promise<void>;
}

export async function listenLocally(server: http.Server): Promise<Listening> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A port that is free now (bound, then released): for a child process that takes its port as an argument. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
