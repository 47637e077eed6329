/** `text` as a literal in a RegExp (paths in expected messages). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
