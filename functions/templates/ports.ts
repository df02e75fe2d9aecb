import type { PageQuery } from '../shared/list.js';
import type { NameClaim } from '../shared/ports.js';
import type { PublishedTemplate, Template } from './model.js';

/** How a claim on an alias went (shared/ports.ts NameClaim). */
export type AliasClaim = NameClaim;

export interface TemplateRepository {
  /**
   * Reserves an alias for a template (one template per alias; its own alias is claimed already;
   * one held for a template that does not exist is taken over).
   */
  claimAlias(alias: string, id: string, nowMs: number): Promise<AliasClaim>;
  releaseAlias(alias: string, id: string): Promise<void>;
  /** Stores a template (version bumped); `existing` only over the version it was read at. */
  save(template: Template, mode: 'new' | 'existing'): Promise<boolean>;
  get(id: string): Promise<Template | null>;
  idOfAlias(alias: string): Promise<string | null>;
  /** Newest first. */
  list(query: PageQuery): Promise<{ data: Template[]; has_more: boolean }>;
  /**
   * Stores the version sends use, read from this version of the template; false when the template
   * was deleted meanwhile, or a newer read of it was published.
   */
  putPublished(templateVersion: number, published: PublishedTemplate): Promise<boolean>;
  published(id: string): Promise<PublishedTemplate | null>;
  delete(template: Template, nowMs: number): Promise<void>;
}
