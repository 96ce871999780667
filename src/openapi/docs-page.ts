export function docsPage(document: unknown): string {
  return `<!doctype html><title>x</title><pre>${JSON.stringify(document).length}</pre>`;
}
