// modelstore.c -- see modelstore.h.
#include "modelstore.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h" // defines: file_read_all

#define MAX_MANIFEST (1u << 20) // a manifest is a few hundred bytes; anything this large is not one
#define MODEL_LAYER "application/vnd.ollama.image.model"

bool modelstore_is_ollama(const char *spec) { return !strncmp(spec, "ollama:", 7); }

// The store's root: $OLLAMA_MODELS, else ~/.ollama/models.
static bool ollama_root(char *out, size_t cap) {
  const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
  int n =
      env && *env ? snprintf(out, cap, "%s", env) : snprintf(out, cap, "%s/.ollama/models", home ? home : "");
  return n > 0 && (size_t)n < cap;
}

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool modelstore_manifest_model(const char *json, size_t len, const char *what, char hex[65], Err *err) {
  cJSON *root = cJSON_ParseWithLength(json, len);
  if (!root) return err_set(err, "%s: not a JSON manifest of Ollama's (a list of \"layers\")", what);
  const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers"), *l;
  bool found = false, ok = false;
  const cJSON *list = cJSON_IsArray(layers) ? layers : NULL;
  cJSON_ArrayForEach(l, list) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(l, "mediaType");
    const cJSON *dg = cJSON_GetObjectItemCaseSensitive(l, "digest");
    if (!cJSON_IsString(mt) || strcmp(mt->valuestring, MODEL_LAYER)) continue;
    found = true;
    const char *d = cJSON_IsString(dg) ? dg->valuestring : "";
    if (strncmp(d, "sha256:", 7) || strlen(d + 7) != 64 || strspn(d + 7, "0123456789abcdef") != 64) break;
    memcpy(hex, d + 7, 65);
    ok = true;
    break;
  }
  cJSON_Delete(root);
  if (!ok)
    return err_set(err,
                   found ? "%s: the model layer's digest is not \"sha256:\" and 64 hex digits"
                         : "%s: no layer of media type " MODEL_LAYER " (is it a model, not an adapter?)",
                   what);
  return true;
}

bool modelstore_ollama_path(const char *spec, char *path, size_t cap, Err *err) {
  const char *name = spec + 7;
  char root[2048], host[256], repo[512], tag[128] = "latest";
  if (!*name || strlen(name) >= sizeof repo || strstr(name, "..") || name[0] == '/')
    return err_set(err, "%s: write ollama:NAME or ollama:NAME:TAG (as `ollama list` shows it)", spec);
  if (!ollama_root(root, sizeof root)) return err_set(err, "%s: HOME or OLLAMA_MODELS is too long", spec);
  // NAME[:TAG]: the tag after the last ':' that follows the last '/'
  snprintf(repo, sizeof repo, "%s", name);
  char *slash = strrchr(repo, '/'), *colon = strrchr(slash ? slash : repo, ':');
  if (colon) {
    if (!colon[1] || strlen(colon + 1) >= sizeof tag)
      return err_set(err, "%s: the tag after ':' is empty or too long", spec);
    snprintf(tag, sizeof tag, "%s", colon + 1);
    *colon = 0;
  }
  int slashes = 0;
  for (const char *p = repo; *p; p++) slashes += *p == '/';
  snprintf(host, sizeof host, "registry.ollama.ai");
  char rest[600];
  if (slashes == 0)
    snprintf(rest, sizeof rest, "library/%s", repo);
  else if (slashes == 1)
    snprintf(rest, sizeof rest, "%s", repo);
  else { // HOST/NS/NAME
    char *first = strchr(repo, '/');
    *first = 0;
    snprintf(host, sizeof host, "%.255s", repo);
    snprintf(rest, sizeof rest, "%s", first + 1);
  }
  char manifest[4096];
  if (snprintf(manifest, sizeof manifest, "%s/manifests/%s/%s/%s", root, host, rest, tag) >=
      (int)sizeof manifest)
    return err_set(err, "%s: the path is too long", spec);
  if (!is_file(manifest))
    return err_set(err,
                   "%s: Ollama has no such model in %s (no manifests/%s/%s/%s): `ollama pull %s` first, or "
                   "set OLLAMA_MODELS to the store",
                   spec, root, host, rest, tag, name);
  size_t len;
  Err e = {0};
  char *json = file_read_all(manifest, &len, MAX_MANIFEST, &e), hex[65];
  if (!json) return err_set(err, "%s: %s", spec, e.msg);
  bool ok = modelstore_manifest_model(json, len, manifest, hex, err);
  free(json);
  if (!ok) return false;
  if (snprintf(path, cap, "%s/blobs/sha256-%s", root, hex) >= (int)cap)
    return err_set(err, "%s: the path is too long", spec);
  if (!is_file(path))
    return err_set(err,
                   "%s: the manifest names blob sha256-%.12s…, which is missing from %s/blobs: pull it again",
                   spec, hex, root);
  return true;
}

// ---------------------------------------------------------------- listing
// dir/name into out; false when it does not fit (then skipped).
static bool join(char *out, size_t cap, const char *dir, const char *name) {
  int n = snprintf(out, cap, "%s/%s", dir, name);
  return n > 0 && (size_t)n < cap;
}

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

// Walks manifests/HOST/NS/NAME/TAG, printing those whose model blob exists.
static int list_ollama(FILE *out) {
  char root[2048], p[4096];
  if (!ollama_root(root, sizeof root)) return 0;
  snprintf(p, sizeof p, "%s/manifests", root);
  DIR *hosts = opendir(p);
  int n = 0;
  for (struct dirent *h; hosts && (h = readdir(hosts));) {
    if (h->d_name[0] == '.') continue;
    char hp[4096];
    DIR *nss = join(hp, sizeof hp, p, h->d_name) ? opendir(hp) : NULL;
    for (struct dirent *ns; nss && (ns = readdir(nss));) {
      if (ns->d_name[0] == '.') continue;
      char np[4096];
      DIR *names = join(np, sizeof np, hp, ns->d_name) ? opendir(np) : NULL;
      for (struct dirent *nm; names && (nm = readdir(names));) {
        if (nm->d_name[0] == '.') continue;
        char tp[4096];
        DIR *tags = join(tp, sizeof tp, np, nm->d_name) ? opendir(tp) : NULL;
        for (struct dirent *tg; tags && (tg = readdir(tags));) {
          if (tg->d_name[0] == '.') continue;
          char spec[800], blob[4096];
          bool lib = !strcmp(h->d_name, "registry.ollama.ai") && !strcmp(ns->d_name, "library");
          bool reg = !strcmp(h->d_name, "registry.ollama.ai");
          int k =
              snprintf(spec, sizeof spec, "ollama:%.100s%s%.100s%s%.100s:%.100s", lib || reg ? "" : h->d_name,
                       lib || reg ? "" : "/", lib ? "" : ns->d_name, lib ? "" : "/", nm->d_name, tg->d_name);
          Err e = {0};
          if (k > 0 && (size_t)k < sizeof spec && modelstore_ollama_path(spec, blob, sizeof blob, &e)) {
            fprintf(out, "%-40s %s\n", spec, blob);
            n++;
          }
        }
        if (tags) closedir(tags);
      }
      if (names) closedir(names);
    }
    if (nss) closedir(nss);
  }
  if (hosts) closedir(hosts);
  return n;
}

// models--ORG--NAME/snapshots/REV/ with a config.json.
static int list_hf(FILE *out) {
  const char *cache = getenv("HF_HUB_CACHE"), *hf = getenv("HF_HOME"), *home = getenv("HOME");
  char root[2048];
  if (cache && *cache)
    snprintf(root, sizeof root, "%s", cache);
  else if (hf && *hf)
    snprintf(root, sizeof root, "%s/hub", hf);
  else
    snprintf(root, sizeof root, "%s/.cache/huggingface/hub", home ? home : "");
  DIR *d = opendir(root);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, "models--", 8)) continue;
    char snaps[4096], model[4096];
    DIR *s = join(model, sizeof model, root, e->d_name) && join(snaps, sizeof snaps, model, "snapshots")
                 ? opendir(snaps)
                 : NULL;
    for (struct dirent *r; s && (r = readdir(s));) {
      if (r->d_name[0] == '.') continue;
      char dir[4096], cfg[4200];
      if (!join(dir, sizeof dir, snaps, r->d_name) || !join(cfg, sizeof cfg, dir, "config.json") ||
          !is_dir(dir) || !is_file(cfg))
        continue;
      char name[256]; // models--ORG--NAME -> ORG/NAME
      snprintf(name, sizeof name, "%.200s", e->d_name + 8);
      char *sep = strstr(name, "--");
      if (sep) memmove(sep + 1, sep + 2, strlen(sep + 2) + 1), *sep = '/';
      char arch[128] = "";
      size_t len;
      Err err = {0};
      char *json = file_read_all(cfg, &len, MAX_MANIFEST, &err);
      cJSON *c = json ? cJSON_ParseWithLength(json, len) : NULL;
      const cJSON *a = c ? cJSON_GetObjectItemCaseSensitive(c, "architectures") : NULL;
      if (cJSON_IsArray(a) && cJSON_IsString(a->child))
        snprintf(arch, sizeof arch, "%.120s", a->child->valuestring);
      cJSON_Delete(c);
      free(json);
      fprintf(out, "hf:%-37s %s  %s\n", name, dir, arch);
      n++;
    }
    if (s) closedir(s);
  }
  if (d) closedir(d);
  return n;
}

int modelstore_list(FILE *out) { return list_ollama(out) + list_hf(out); }
