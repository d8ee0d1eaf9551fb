// A small, strict set: what catches real bugs in this code (a promise nobody awaits, a
// variable nobody reads) and keeps imports honest; formatting is Prettier's job.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["generated/**", "node_modules/**", "**/dist/**", "data/**", "tmp/**", "reports/**"] },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
    },
  },
  { files: ["test/**/*.ts", "bench/**/*.ts"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
);
