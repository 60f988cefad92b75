/*
 * hfid.c: model=owner/name, a Hugging Face id that is no file or folder here (net.c's from_path
 * asks), as the preset whose id matches the name: case, '-', '_' and spaces ignored (eci_name_eq),
 * then with a release suffix (-Instruct, -it, -pt, -Base, -chat, -hf) taken off, since those
 * checkpoints share the base model's shapes (meta-llama/Llama-3.1-8B-Instruct is llama-3.1-8b).
 * No preset: the error says where the config.json is to be had and what to pass instead.
 */
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#include "model/net.h"

#include <string.h>
#include <strings.h>

/* owner/name with one '/', both parts made of letters, digits, '-', '_' and '.', neither
 * starting with '.', and no ".json" at the end: what the Hub accepts as a repository id. */
int eci_hf_id_like(const char *name)
{
    const char *slash = strchr(name, '/');
    size_t n = strlen(name);
    if (slash == NULL || slash == name || slash[1] == '\0' || strchr(slash + 1, '/') != NULL || n > 200)
        return 0;
    if (name[0] == '.' || slash[1] == '.' || (n > 5 && strcmp(name + n - 5, ".json") == 0))
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == n;
}

/* Take a release suffix off word (in place); 0 when it has none. */
static int strip_suffix(char *word)
{
    static const char *const suffixes[] = {"-instruct", "-it", "-pt", "-base", "-chat", "-hf", "_instruct"};
    size_t n = strlen(word);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t m = strlen(suffixes[i]);
        if (n > m + 1 && strncasecmp(word + n - m, suffixes[i], m) == 0) {
            word[n - m] = '\0';
            return 1;
        }
    }
    return 0;
}

const char *eci_hf_id_preset(const char *name, const char *const *ids, size_t n)
{
    char word[256];
    eci_strlcpy(word, strchr(name, '/') + 1, sizeof word);
    do {
        for (size_t i = 0; i < n; i++)
            if (eci_name_eq(ids[i], word))
                return ids[i];
    } while (strip_suffix(word));
    return NULL;
}

int eci_hf_id_error(ec_ctx *ctx, const char *name)
{
    /* the name is made of id characters only (eci_hf_id_like): quoting it as it is is safe */
    return eci_error(ctx, EC_ENOTFOUND, "model '%s': no file or folder of that name, and no preset matches its "
                     "name (`epochcast models` lists them); for this Hugging Face model, download "
                     "https://huggingface.co/%s/resolve/main/config.json into a folder and pass model=FOLDER",
                     name, name);
}
