/**
 * Checks of one answer object that the stream checks repeat on their final event: usage that
 * adds up, and a response object's store, status and incomplete_details.
 */
import { isPlainObject } from "../matchers.ts";
import { type ProtocolProblem, type Received, received, type Schemas } from "./problems.ts";

/** Usage of a response object: input + output = total, every count an integer >= 0. */
export function checkUsage(usage: unknown, at: string, rule: string): ProtocolProblem[] {
  const counts = received<Schemas["Usage"]>(usage);
  if (counts === undefined) return [{ rule, message: "usage is missing", at }];
  const { input_tokens: i, output_tokens: o, total_tokens: t } = counts;
  if (![i, o, t].every((n) => typeof n === "number" && Number.isInteger(n) && n >= 0))
    return [{ rule, message: "usage counts must be integers >= 0", at, received: usage }];
  if ((i as number) + (o as number) !== t)
    return [
      {
        rule,
        message: `total_tokens must equal input_tokens + output_tokens (${String(i)} + ${String(o)} = ${(i as number) + (o as number)})`,
        at: `${at}.total_tokens`,
        expected: (i as number) + (o as number),
        received: t,
      },
    ];
  return [];
}

/** Usage of a chat completion or a completion: prompt + completion = total. */
export function checkChatUsage(usage: unknown, at: string): ProtocolProblem[] {
  const counts = received<Schemas["ChatUsage"]>(usage);
  if (counts === undefined) return [];
  const { prompt_tokens: p, completion_tokens: c, total_tokens: t } = counts;
  if (typeof p === "number" && typeof c === "number" && p + c !== t)
    return [
      {
        rule: "inference.usage",
        message: `total_tokens must equal prompt_tokens + completion_tokens (${p} + ${c} = ${p + c})`,
        at: `${at}.total_tokens`,
        expected: p + c,
        received: t,
      },
    ];
  return [];
}

/** A response object: usage adds up, store false, status and incomplete_details agree. */
export function checkResponseObject(
  response: Received<Schemas["ResponseObject"]>,
  at: string,
  usageRule: string,
  streamedFinal: boolean,
): ProtocolProblem[] {
  const problems = checkUsage(response.usage, `${at}.usage`, usageRule);
  if (response.store !== false)
    problems.push({
      rule: "responses.rule-1",
      message: "store must be false in every response object",
      at: `${at}.store`,
      received: response.store,
    });
  const status = response.status;
  if (status !== "completed" && status !== "incomplete")
    problems.push({
      rule: "states.response",
      message: `status must be completed or incomplete${streamedFinal ? " in response.completed" : ""}`,
      at: `${at}.status`,
      received: status,
    });
  const details = response.incomplete_details;
  if (status === "incomplete") {
    if (!isPlainObject(details) || details.reason !== "max_output_tokens")
      problems.push({
        rule: "states.response",
        message: "an incomplete response must say incomplete_details.reason max_output_tokens",
        at: `${at}.incomplete_details`,
        received: details,
      });
  } else if (status === "completed" && details !== undefined && details !== null) {
    problems.push({
      rule: "states.response",
      message: "a completed response has incomplete_details null or absent",
      at: `${at}.incomplete_details`,
      received: details,
    });
  }
  problems.push(...checkOutputItemStatuses(response, at));
  return problems;
}

/**
 * The items of a finished response: each `completed`, except the one the output ceiling cut,
 * which is `incomplete` — only in an incomplete response, only its last item, never a
 * function call (one that does not fit is not sent); and a message that ends an incomplete
 * response is the one the ceiling cut, so it says `incomplete`.
 */
function checkOutputItemStatuses(response: Received<Schemas["ResponseObject"]>, at: string): ProtocolProblem[] {
  if (!Array.isArray(response.output)) return [];
  const cut = response.status === "incomplete";
  const last = response.output.length - 1;
  const problems: ProtocolProblem[] = [];
  response.output.forEach((value: unknown, index) => {
    const item = received<Schemas["OutputItem"]>(value);
    if (item === undefined) return;
    const problem = itemStatusProblem(item.type, item.status, cut && index === last);
    if (problem !== undefined)
      problems.push({
        rule: "states.response",
        message: problem,
        at: `${at}.output[${index}].status`,
        received: item.status,
      });
  });
  return problems;
}

/** What is wrong with one item's status, given whether it ends an incomplete response. */
function itemStatusProblem(type: unknown, status: unknown, endsCutAnswer: boolean): string | undefined {
  if (status !== "completed" && status !== "incomplete")
    return "an output item of a finished response has status completed or incomplete";
  if (status === "incomplete" && type === "function_call")
    return "a function call is never incomplete: one the ceiling would cut is not sent";
  if (status === "incomplete" && !endsCutAnswer)
    return "only the last item of an incomplete response, the one the ceiling cut, may be incomplete";
  if (status === "completed" && endsCutAnswer && type === "message")
    return "the message that ends an incomplete response is the one the ceiling cut: its status is incomplete";
  return undefined;
}
