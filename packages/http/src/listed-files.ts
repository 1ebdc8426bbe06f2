import { join } from "node:path";
import type { NextFunction, Request, Response } from "express";

/**
 * A route handler (for a path with a `:file` parameter) that serves only the named files of
 * `dir`, each with its given Content-Type; any other name falls through to the next route (a JSON
 * 404). For assets that come from a package's folder, of which a page uses a few: serving the
 * folder would publish everything else in it (demo pages, OAuth helpers, package.json).
 */
export function listedFiles(dir: string, types: Readonly<Record<string, string>>, maxAge: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const file = String(req.params.file ?? "");
    const type = Object.hasOwn(types, file) ? types[file] : undefined;
    if (!type) {
      next();
      return;
    }
    // dotfiles: pnpm keeps packages under node_modules/.pnpm, which send() would refuse as hidden.
    res.sendFile(join(dir, file), { maxAge, dotfiles: "allow", headers: { "Content-Type": type } });
  };
}
