/** Browser scripts imported `with { type: "text" }`: their text, which Bun and Deno embed. */
declare module "*.browser.js" {
  const text: string;
  export default text;
}
