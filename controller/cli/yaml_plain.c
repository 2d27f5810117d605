/* Which strings may be written as plain YAML scalars (gitops.h, po_Cli_YamlPlainIsString).
 *
 * libyaml's emitter already refuses the plain style where the syntax needs quotes (leading and
 * trailing spaces, an indicator at the start, "- ", ": ", " #", "---", line breaks, characters
 * it must escape). What it cannot know is how a reader types a plain scalar: every reader
 * resolves some plain texts to booleans, nulls, numbers or timestamps, and the readers differ:
 * YAML 1.1 (PyYAML; Go's yaml.v2 behind kubectl and sigs.k8s.io/yaml) reads y, n, yes, on, off,
 * 0b101, 017, 1_000, sexagesimal 1:30 and 1:30.5, timestamps, and `=` (the value key, which
 * PyYAML refuses to build) and `<<` (the merge key); YAML 1.2's core schema reads 0o17, 0x1f
 * and 1e3; Go's strconv (yaml.v2's integers) reads 0o17 and 0x_1f. A string is written plain
 * only when it is none of those to any of them, judged by a superset of their patterns, so a
 * reader's corner we did not list still finds the text quoted: quoting a string that needed no
 * quotes changes nothing a reader sees. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "gitops.h"

/* Words some reader resolves to a boolean, a null, a float or a key type; compared without
 * case (yaml.v2 lists only three spellings of each, but a reader that folds case is not wrong). */
static bool reserved_word(const char *s) {
  static const char *const kWords[] = {"y",    "n",     "yes",  "no",   "on",    "off",   "true", "false",
                                       "null", "~",     "=",    "<<",   ".inf",  "+.inf", "-.inf", ".nan",
                                       "inf",  "+inf",  "-inf", "nan",  "infinity", "+infinity", "-infinity"};
  for (size_t i = 0; i < sizeof kWords / sizeof *kWords; i++) {
    if (!strcasecmp(s, kWords[i])) return true;
  }
  return false;
}

/* Whether s could be a number or a timestamp to some reader: after an optional sign, a digit or
 * a '.', then only characters the numeric and timestamp forms of YAML 1.1, YAML 1.2
 * and Go's strconv use (digits, '_', '.', ':', signs, exponent and base letters, hexadecimal
 * digits, p for hexadecimal floats, t and z and blanks for timestamps). "5s", "1.5s", "10m" and
 * "v1" stay plain: no reader has a number with an s, m or v in it. */
static bool numeric_like(const char *s) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  /* '.' alone too: YAML 1.1's own float pattern takes ".", and a reader may follow it; '_' after
   * a sign: yaml.v2 drops every '_' of a text that starts like a number ("+_1" is 1 to kubectl) */
  if (!(*p >= '0' && *p <= '9') && *p != '.' && !(p != s && *p == '_')) return false;
  return strspn(p, "0123456789_.:+-eEoOxXbBaAcCdDfFpPtTzZ \t") == strlen(p);
}

bool po_Cli_YamlPlainIsString(const char *s) {
  return *s && !reserved_word(s) && !numeric_like(s);
}
