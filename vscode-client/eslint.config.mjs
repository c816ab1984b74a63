// ESLint for the extension's TypeScript (src/, test/): typescript-eslint's type-checked
// recommended rules, with the types from tsconfig.json. Run by `npm run lint` and by
// tests/vscode/test_client_static.py.
import eslint from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "out/", "node_modules/"] },
  {
    files: ["**/*.ts"],
    extends: [eslint.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // node:test's test() returns a promise that the runner itself awaits and reports.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["test", "it", "describe", "suite"] }] },
      ],
    },
  },
  {
    files: ["**/*.mjs"],
    extends: [eslint.configs.recommended],
    languageOptions: { globals: { process: "readonly" } },
  },
);
