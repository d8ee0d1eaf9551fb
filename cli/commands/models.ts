/** `models list`: the models the key can call, platform and fine-tuned. */
import { Command } from "commander";
import { ok } from "../../client/index.ts";
import { act } from "../command.ts";
import { table } from "../format.ts";

export function modelsCommand(): Command {
  const models = new Command("models").description(
    "The models this key can call: platform models and the account's fine-tuned ones.",
  );
  models
    .command("list")
    .description("List the models (fine-tuned ones as accounts/{account}/models/{id} and …/deployments/{id}).")
    .action(
      act<[], object>(async (ctx) => {
        const list = await ok(ctx.client.GET("/models"));
        if (ctx.json) return ctx.printJson(list.data);
        ctx.print(
          table([
            ["MODEL", "OWNED BY", "CREATED"],
            ...list.data.map((m) => [
              m.id,
              m.owned_by,
              new Date(m.created * 1000).toISOString().slice(0, 19).replace("T", " "),
            ]),
          ]),
        );
      }),
    );
  return models;
}
