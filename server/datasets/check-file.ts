/**
 * One version's file checked the way a dataset reports it: validateFile's findings, with
 * each reason naming its line (the reason is often shown without the line number beside
 * it) and a file without a single row failing as a whole.
 */
import { validateFile } from "./validate-file.ts";
import { WHOLE_FILE, type ValidationRecord } from "../store/datasets.ts";

export async function checkVersionFile(file: string): Promise<ValidationRecord> {
  const result = await validateFile(file);
  const { firstInvalidLine, ...counts } = result;
  if (firstInvalidLine)
    return {
      ...counts,
      firstInvalidLine: {
        lineNumber: firstInvalidLine.lineNumber,
        reason: `line ${firstInvalidLine.lineNumber}: ${firstInvalidLine.reason}`,
      },
    };
  if (result.validLines === 0)
    return {
      ...counts,
      firstInvalidLine: { lineNumber: WHOLE_FILE, reason: "the file holds no rows; put one JSON object per line" },
    };
  return counts;
}
