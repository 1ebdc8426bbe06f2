/**
 * Where a file's blobs live. Keys are built from ids Locus made, never from names users sent,
 * so nothing a client uploads can choose a path.
 */
export const fileBlobKey = (userId: string, fileId: string) => `files/${userId}/${fileId}`;
export const extractionBlobKey = (userId: string, fileId: string) => `extractions/${userId}/${fileId}.jsonl`;
/** The PDF an office document was converted to: what its page and line locators point into. */
export const renditionBlobKey = (userId: string, fileId: string) => `renditions/${userId}/${fileId}.pdf`;
