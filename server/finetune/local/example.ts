/**
 * The training examples of the embedded model: a chat as the datasets give it, and the
 * tokenized sequence every step, loss and rehearsal works on. Its own module so that the
 * loss (loss.ts) and the rehearsal set (rehearsal.ts) need not import the training steps
 * (train.ts), which import them.
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
  /** 0 makes an assistant message context only (not a target); 1, the default, trains on it. */
  weight?: 0 | 1;
}

export interface ChatExample {
  messages: ChatMessage[];
}

/** A tokenized training sequence; targetMask[i] = 1 when tokens[i] is learned. */
export interface EncodedExample {
  tokens: number[];
  targetMask: number[];
}
