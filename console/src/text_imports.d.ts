/** Style sheets a chunk imports as text (`with { type: 'text' }`, bundled by esbuild) to adopt as constructed sheets. */
declare module '*.css' {
  const text: string;
  export default text;
}
