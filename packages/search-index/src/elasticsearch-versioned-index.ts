import type { Client, TransportRequestOptions } from "@elastic/elasticsearch";
import type { FilePassages, VectorSlot } from "./search-index.ts";
import {
  ELASTICSEARCH_MAPPING_VERSION,
  RESET_REFRESH_INTERVAL,
  type passageIndexBody,
} from "./elasticsearch-index-mapping.ts";
import { bulkItem, type PassageWriter } from "./elasticsearch-passage-writer.ts";
import { errorType, unavailableIfDown } from "./elasticsearch-errors.ts";
import { storedAttributes } from "./file-filter.ts";

/**
 * The physical indexes behind the alias: the current version's, created on first use (and again
 * when the alias has gone), and the fresh copy `rebuild` loads and swaps in.
 */
export class VersionedIndex {
  constructor(
    private readonly client: Client,
    private readonly alias: string,
    private readonly body: ReturnType<typeof passageIndexBody>,
    private readonly writer: PassageWriter,
    /** Each vector slot's mapped dimensions, where known (see bulkItem). */
    private readonly dims: Partial<Record<VectorSlot, number>>,
  ) {}

  /**
   * Creates the current version's index with the alias pointing at it, unless the alias exists.
   * Called once before first use, and by every `check()` (so a deleted alias comes back).
   */
  async ensure(request: TransportRequestOptions): Promise<void> {
    try {
      if (await this.client.indices.existsAlias({ name: this.alias }, request)) return;
      const index = `${this.alias}-v${ELASTICSEARCH_MAPPING_VERSION}`;
      try {
        await this.client.indices.create({ index, ...this.body, aliases: { [this.alias]: {} } }, request);
      } catch (err) {
        // Another process created it between our check and our create: fine, if it has the alias.
        // An index left without its alias (an operator removed it) gets it back.
        if (errorType(err) !== "resource_already_exists_exception") throw err;
        if (await this.client.indices.existsAlias({ name: this.alias }, request)) return;
        await this.client.indices.updateAliases(
          { actions: [{ add: { index, alias: this.alias } }] },
          request,
        );
      }
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /**
   * Zero-downtime reindex: loads every file's passages into a new physical index
   * (`<prefix>-v<N>-<timestamp>`, created with the current mapping), refreshes it, then moves the
   * alias to it in one `updateAliases` request (remove + add, atomic for readers) and deletes the old
   * index. Searches keep using the old index until the swap. On any failure the new index is
   * deleted and the alias is left as it was.
   *
   * Writes that go to the alias while a rebuild runs land in the old index and are lost with it,
   * and a file deleted after the source listed it comes back: run it with the indexer paused (or
   * re-index files changed since it started).
   */
  async rebuild(
    source: AsyncIterable<FilePassages>,
    /** Called once the alias points at the new index, before the old one is deleted. */
    onLive: () => void,
  ): Promise<{ files: number; passages: number }> {
    const target = `${this.alias}-v${ELASTICSEARCH_MAPPING_VERSION}-${Date.now()}`;
    let created = false;
    try {
      const old = (await this.client.indices.existsAlias({ name: this.alias }))
        ? Object.keys(await this.client.indices.getAlias({ name: this.alias }))
        : [];
      // No refreshes while loading (the index is not searched yet): fewer, larger segments.
      await this.client.indices.create({
        index: target,
        mappings: this.body.mappings,
        settings: { ...this.body.settings, refresh_interval: "-1" },
      });
      created = true;

      const batches = this.writer.batches(target);
      let files = 0;
      let total = 0;
      for await (const { file, passages } of source) {
        const attributes = storedAttributes(file);
        let ord = 0;
        for await (const passage of passages)
          await batches.add(bulkItem(file, ord++, passage, attributes, this.dims));
        files += 1;
        total += ord;
      }
      await batches.flush(false);

      await this.client.indices.putSettings({ index: target, settings: RESET_REFRESH_INTERVAL });
      await this.client.indices.refresh({ index: target });
      await this.client.indices.updateAliases({
        actions: [
          ...old.map((index) => ({ remove: { index, alias: this.alias } })),
          { add: { index: target, alias: this.alias } },
        ],
      });
      created = false; // It is the live index now: never delete it below.
      onLive();
      if (old.length > 0) {
        await this.client.indices.delete({ index: old }).catch((err: unknown) => {
          throw new Error(
            `Rebuilt the index into ${target} and moved ${this.alias} to it, but could not delete the old index ${old.join(", ")}: delete it by hand.`,
            { cause: err },
          );
        });
      }
      return { files, passages: total };
    } catch (err) {
      if (created) await this.client.indices.delete({ index: target }).catch(() => undefined);
      throw unavailableIfDown(err);
    }
  }
}
