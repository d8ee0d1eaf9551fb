/**
 * Image and file inputs. The server fetches media itself, only from an allow-list of
 * URL prefixes, so every media rule is checked before any model sees the request:
 * too large → MEDIA_TOO_LARGE, cannot fetch → MEDIA_FETCH_FAILED, and a text-only
 * model → MEDIA_UNSUPPORTED.
 */
import { request } from "undici";
import { ApiError } from "../api-error.ts";
import type { PlatformModel } from "./catalog.ts";
import type { MediaPart, Turn } from "./engine.ts";

export interface MediaSettings {
  /** Largest inline or fetched media part, in bytes. */
  mediaMaxBytes: number;
  /** URL prefixes the server may fetch media from; anything else fails to fetch. */
  mediaFetchAllowList: string[];
  /** Milliseconds to wait for a media fetch. */
  mediaFetchTimeoutMs: number;
}

export async function checkMedia(spec: PlatformModel, turns: Turn[], settings: MediaSettings): Promise<void> {
  const parts = turns.flatMap((t) => (t.kind === "message" ? t.media : []));
  for (const part of parts) await loadMedia(part, settings);
  const first = parts[0];
  if (first !== undefined && !spec.media) {
    throw new ApiError(
      "MEDIA_UNSUPPORTED",
      `The model \`${spec.id}\` accepts text only; remove the ${first.kind} input.`,
      { param: first.param },
    );
  }
}

/** Checks one part's size, fetching it when it is given by URL. */
async function loadMedia(part: MediaPart, settings: MediaSettings): Promise<void> {
  const inline = inlineBytes(part);
  if (inline !== undefined) {
    if (inline > settings.mediaMaxBytes) throw tooLarge(part, settings);
    return;
  }
  if (part.url === undefined) {
    throw new ApiError("INVALID_REQUEST", `The ${part.kind} input has neither data nor a URL.`, { param: part.param });
  }
  const bytes = await fetchSize(part.url, settings);
  if (bytes === undefined) {
    throw new ApiError("MEDIA_FETCH_FAILED", `The ${part.kind} at ${part.url} could not be fetched.`, {
      param: part.param,
    });
  }
  if (bytes > settings.mediaMaxBytes) throw tooLarge(part, settings);
}

function tooLarge(part: MediaPart, settings: MediaSettings): ApiError {
  return new ApiError("MEDIA_TOO_LARGE", `The ${part.kind} input is larger than ${settings.mediaMaxBytes} bytes.`, {
    param: part.param,
  });
}

/** Decoded size of base64 data given inline or as a `data:` URL; undefined for a fetched URL. */
function inlineBytes(part: MediaPart): number | undefined {
  const data = part.data ?? (part.url?.startsWith("data:") ? part.url.slice(part.url.indexOf(",") + 1) : undefined);
  if (data === undefined) return undefined;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/** The size of an allowed URL's body, read up to the limit; undefined when it cannot be fetched. */
async function fetchSize(url: string, settings: MediaSettings): Promise<number | undefined> {
  if (!settings.mediaFetchAllowList.some((prefix) => url.startsWith(prefix))) return undefined;
  try {
    const response = await request(url, {
      method: "GET",
      headersTimeout: settings.mediaFetchTimeoutMs,
      bodyTimeout: settings.mediaFetchTimeoutMs,
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return undefined;
    }
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > settings.mediaMaxBytes) break; // enough to know it is too large
    }
    return size;
  } catch {
    return undefined;
  }
}
