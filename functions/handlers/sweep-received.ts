/**
 * Placeholder (issue 38): the stack builds every function of the catalog from its handler file;
 * the real handler comes from the branch that builds it (design38.md) and replaces this one.
 */
export const handler = async (): Promise<never> => {
  throw new Error('sweep-received is not built yet');
};
