import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", ".planbridge/**", "migrations/**", "fixtures/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    // The web client renders from capabilities only: a provider added on the server later must
    // render without a client change, so no code there may name one.
    files: ["apps/web/src/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "Literal[value=/codex|claude|cursor/i]",
          message: "apps/web renders from capabilities, never from a provider's name"
        },
        {
          selector: "TemplateElement[value.raw=/codex|claude|cursor/i]",
          message: "apps/web renders from capabilities, never from a provider's name"
        },
        {
          selector: "JSXText[value=/codex|claude|cursor/i]",
          message: "apps/web renders from capabilities, never from a provider's name"
        }
      ]
    }
  }
)
