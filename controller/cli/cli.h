/* Subcommands of the propertyoverride command, and the file reading they share. */
#ifndef PO_CLI_H_
#define PO_CLI_H_

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "po/engine.h"

/* Exit codes every subcommand uses. */
enum { kPo_Exit_Ok = 0, kPo_Exit_Invalid = 1, kPo_Exit_Usage = 2 };

int po_Cmd_Patch(int argc, char **argv);
int po_Cmd_Validate(int argc, char **argv);
int po_Cmd_Controller(int argc, char **argv);
/* The GitOps side (issue 5): cmd_render.c, cmd_explain.c, completion.c; validate -f in
 * cmd_validate.c. Shared pieces are in gitops.h. */
int po_Cmd_Render(int argc, char **argv);
int po_Cmd_Explain(int argc, char **argv);
int po_Cmd_Completion(int argc, char **argv);
/* Issue 13: what overrides would change in a proxy's /config_dump (cmd_preview.c, preview.h). */
int po_Cmd_Preview(int argc, char **argv);
/* Issue 24: what breaks when the mesh is upgraded (cmd_upgrade.c, upgrade.h). */
int po_Cmd_UpgradeCheck(int argc, char **argv);

/* Every file the one-shot commands read goes through these two (one set of rules): a path is
 * opened without blocking and refused unless it is a regular file (a FIFO, a device, a socket,
 * a directory: "PATH: a FIFO (named pipe), not a regular file: refused ..."), and a regular
 * file over the limit is refused from its size before it is read ("PATH: N bytes, larger than
 * M MiB: refused without reading it"). "-" is stdin, read whatever it is, up to the limit.
 * po_Cli_ReadFile: into the arena, NUL-terminated, at most 64 MiB (nothing a whole-tree reader
 * takes is legitimately that large). */
char *po_Cli_ReadFile(const char *path, po_Arena *a, size_t *len, po_Status *st);
/* The same with malloc (the caller frees) and a limit of its own: for readers that keep only a
 * bounded part of the parsed input (validate -f streams), so the text can go once read. */
char *po_Cli_ReadFileMalloc(const char *path, size_t max, size_t *len, po_Status *st);
/* What a stat mode is, in words for messages: "a FIFO (named pipe)", "a character device"... */
const char *po_Cli_FileType(mode_t mode);
/* JSON when the text is valid JSON, else YAML (which must hold exactly one document). Errors
 * name the file and, for parse errors, line and column. */
po_Value *po_Cli_ParseDocument(const char *path, const char *text, size_t len, po_Arena *a, po_Status *st);
/* Flushes `out` and tells whether everything written to it arrived (a full disk, a closed
 * pipe); when not, says so on stderr as "propertyoverride CMD: cannot write WHAT: reason". A
 * command whose output was lost must not exit 0. */
bool po_Cli_Flush(FILE *out, const char *cmd, const char *what);

#endif
