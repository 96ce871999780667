// The screen's stylesheet and script are imported as text (`with { type: "text" }`).
declare module "*/admin.css" {
  const text: string;
  export default text;
}
declare module "*/admin.js" {
  const text: string;
  export default text;
}
