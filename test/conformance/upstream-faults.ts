/** The misbehaving upstream now lives with the server, which offers it on the development seed (server/dev/). */
export { startTriggeredUpstream, type TriggeredUpstream } from "../../server/dev/misbehaving-upstream.ts";
