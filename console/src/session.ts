/**
 * The signed-in API key, kept for this tab's session only: sessionStorage (gone when the tab
 * closes), never localStorage, a cookie or the URL.
 */
const KEY = 'console.apiKey';

export const session = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (apiKey: string) => sessionStorage.setItem(KEY, apiKey),
  clear: () => sessionStorage.removeItem(KEY),
};
