/*
 * Native side of bench/pcr.ts. Two modes:
 *
 *   decode bench [-raw] RUNS FILE...
 *     Each FILE holds many JPEGs: "BLJ1", u32 count, u32 channels (1 = gray,
 *     3 = RGB), then per image a u32 length and the JPEG bytes (all u32
 *     little-endian). Decodes every image of every file with
 *     tjDecompressHeader3 + tjDecompress2 once untimed (warm-up; with -raw the
 *     pixels go back to back to FILE.raw), then RUNS rounds, each timing one
 *     pass over each file in turn (interleaved, so a slow moment hurts every
 *     file alike).
 *     Prints "images K N" and "warnings K W" per file, and "ns K T" per timed
 *     pass (K = the file's index).
 *
 *   decode spawn DJPEG RUNS WARMUP LIST...
 *     Runs `DJPEG -outfile /dev/null PATH` as its own process for every path
 *     in a LIST file (one a line), waiting for each: WARMUP processes per list
 *     untimed first, then RUNS rounds of one timed pass over each list in turn.
 *     Prints "images K N" per list and "ns K T" per timed pass.
 *
 *   decode pnm DJPEG LIST...
 *     Runs `DJPEG -pnm -outfile PATH.pnm PATH` for every path in the LIST
 *     files (for checking pixels; starting djpeg from here is much cheaper
 *     than from Node). Prints "images K N" per list.
 *
 * Build: cc -O2 decode.c -lturbojpeg -o decode
 *   (with -DNO_TURBOJPEG and no library: spawn mode only).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#ifndef NO_TURBOJPEG
#include <turbojpeg.h>
#endif

extern char **environ;

static void die(const char *what) {
  fprintf(stderr, "decode: %s\n", what);
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open input file");
  size_t cap = 1 << 20, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) die("out of memory");
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) die("out of memory");
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    if (n == 0) break;
    len += n;
  }
  fclose(f);
  *size = len;
  return buf;
}

#ifndef NO_TURBOJPEG
static uint32_t u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct batch {
  unsigned char *buf;
  uint32_t count, channels;
  const unsigned char **jpeg;
  unsigned long *len;
};

static void load_batch(const char *file, struct batch *b) {
  size_t size;
  b->buf = read_all(file, &size);
  if (size < 12 || memcmp(b->buf, "BLJ1", 4) != 0) die("input is not a BLJ1 file");
  b->count = u32le(b->buf + 4);
  b->channels = u32le(b->buf + 8);
  if (b->channels != 1 && b->channels != 3) die("channels must be 1 or 3");
  b->jpeg = malloc(b->count * sizeof *b->jpeg);
  b->len = malloc(b->count * sizeof *b->len);
  if (!b->jpeg || !b->len) die("out of memory");
  size_t at = 12;
  for (uint32_t i = 0; i < b->count; i++) {
    if (at + 4 > size) die("truncated input");
    b->len[i] = u32le(b->buf + at);
    at += 4;
    if (at + b->len[i] > size) die("truncated input");
    b->jpeg[i] = b->buf + at;
    at += b->len[i];
  }
}

static unsigned char *out = NULL;
static size_t outcap = 0;

/* One pass over a batch; returns the number of images libjpeg warned about. */
static unsigned long decode_batch(tjhandle tj, const struct batch *b, FILE *raw) {
  int pf = b->channels == 1 ? TJPF_GRAY : TJPF_RGB;
  unsigned long warnings = 0;
  for (uint32_t i = 0; i < b->count; i++) {
    int w, h, subsamp, colorspace;
    if (tjDecompressHeader3(tj, b->jpeg[i], b->len[i], &w, &h, &subsamp, &colorspace) != 0) {
      fprintf(stderr, "decode: image %u: %s\n", i, tjGetErrorStr2(tj));
      exit(1);
    }
    size_t need = (size_t)w * (size_t)h * b->channels;
    if (need > outcap) {
      free(out);
      outcap = need * 2;
      out = malloc(outcap);
      if (!out) die("out of memory");
    }
    if (tjDecompress2(tj, b->jpeg[i], b->len[i], out, w, w * (int)b->channels, h, pf, 0) != 0) {
      if (tjGetErrorCode(tj) == TJERR_FATAL) {
        fprintf(stderr, "decode: image %u: %s\n", i, tjGetErrorStr2(tj));
        exit(1);
      }
      warnings++;
    }
    if (raw && fwrite(out, 1, need, raw) != need) die("cannot write raw output");
  }
  return warnings;
}

static int bench(int runs, int write_raw, int files, char **paths) {
  struct batch *batches = calloc((size_t)files, sizeof *batches);
  if (!batches) die("out of memory");
  tjhandle tj = tjInitDecompress();
  if (!tj) die("tjInitDecompress failed");
  for (int k = 0; k < files; k++) {
    load_batch(paths[k], &batches[k]);
    FILE *raw = NULL;
    if (write_raw) {
      size_t n = strlen(paths[k]);
      char *rawpath = malloc(n + 5);
      if (!rawpath) die("out of memory");
      memcpy(rawpath, paths[k], n);
      memcpy(rawpath + n, ".raw", 5);
      raw = fopen(rawpath, "wb");
      if (!raw) die("cannot open raw output file");
      free(rawpath);
    }
    unsigned long warnings = decode_batch(tj, &batches[k], raw);
    if (raw && fclose(raw) != 0) die("cannot write raw output");
    printf("images %d %u\nwarnings %d %lu\n", k, batches[k].count, k, warnings);
  }
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < files; k++) {
      uint64_t t0 = now_ns();
      decode_batch(tj, &batches[k], NULL);
      printf("ns %d %llu\n", k, (unsigned long long)(now_ns() - t0));
    }
  }
  tjDestroy(tj);
  for (int k = 0; k < files; k++) {
    free(batches[k].jpeg);
    free(batches[k].len);
    free(batches[k].buf);
  }
  free(batches);
  free(out);
  return 0;
}
#endif

/* Runs DJPEG [-pnm] -outfile OUTFILE PATH and waits for it; exits on failure. */
static void run_djpeg_to(const char *djpeg, char *path, char *outfile, int pnm) {
  char *with_pnm[] = {(char *)djpeg, "-pnm", "-outfile", outfile, path, NULL};
  char *plain[] = {(char *)djpeg, "-outfile", outfile, path, NULL};
  char **argv = pnm ? with_pnm : plain;
  pid_t pid;
  int err = posix_spawn(&pid, djpeg, NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "decode: cannot start %s: %s\n", djpeg, strerror(err));
    exit(1);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid failed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "decode: %s failed on %s\n", djpeg, path);
    exit(1);
  }
}

static void run_djpeg(const char *djpeg, char *path) { run_djpeg_to(djpeg, path, "/dev/null", 0); }

struct list {
  char *text;
  char **paths;
  size_t count;
};

static void load_list(const char *file, struct list *l) {
  size_t size;
  l->text = (char *)read_all(file, &size);
  l->text = realloc(l->text, size + 1);
  if (!l->text) die("out of memory");
  l->text[size] = '\0';
  size_t cap = 256;
  l->count = 0;
  l->paths = malloc(cap * sizeof *l->paths);
  if (!l->paths) die("out of memory");
  for (char *line = strtok(l->text, "\n"); line; line = strtok(NULL, "\n")) {
    if (l->count == cap) {
      cap *= 2;
      l->paths = realloc(l->paths, cap * sizeof *l->paths);
      if (!l->paths) die("out of memory");
    }
    l->paths[l->count++] = line;
  }
  if (l->count == 0) die("empty list of files");
}

static int spawn(const char *djpeg, int runs, int warmup, int files, char **paths) {
  struct list *lists = calloc((size_t)files, sizeof *lists);
  if (!lists) die("out of memory");
  for (int k = 0; k < files; k++) {
    load_list(paths[k], &lists[k]);
    printf("images %d %zu\n", k, lists[k].count);
    for (int i = 0; i < warmup; i++) run_djpeg(djpeg, lists[k].paths[(size_t)i % lists[k].count]);
  }
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < files; k++) {
      uint64_t t0 = now_ns();
      for (size_t i = 0; i < lists[k].count; i++) run_djpeg(djpeg, lists[k].paths[i]);
      printf("ns %d %llu\n", k, (unsigned long long)(now_ns() - t0));
    }
  }
  for (int k = 0; k < files; k++) {
    free(lists[k].paths);
    free(lists[k].text);
  }
  free(lists);
  return 0;
}

static int pnm(const char *djpeg, int files, char **paths) {
  for (int k = 0; k < files; k++) {
    struct list l;
    load_list(paths[k], &l);
    for (size_t i = 0; i < l.count; i++) {
      size_t n = strlen(l.paths[i]);
      char *outfile = malloc(n + 5);
      if (!outfile) die("out of memory");
      memcpy(outfile, l.paths[i], n);
      memcpy(outfile + n, ".pnm", 5);
      run_djpeg_to(djpeg, l.paths[i], outfile, 1);
      free(outfile);
    }
    printf("images %d %zu\n", k, l.count);
    free(l.paths);
    free(l.text);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "bench") == 0) {
#ifdef NO_TURBOJPEG
    die("built without TurboJPEG (-DNO_TURBOJPEG): bench mode unavailable");
#else
    int write_raw = strcmp(argv[2], "-raw") == 0;
    if (argc < 4 + write_raw) die("decode bench needs RUNS and at least one FILE");
    return bench(atoi(argv[2 + write_raw]), write_raw, argc - 3 - write_raw, argv + 3 + write_raw);
#endif
  }
  if (argc >= 6 && strcmp(argv[1], "spawn") == 0) return spawn(argv[2], atoi(argv[3]), atoi(argv[4]), argc - 5, argv + 5);
  if (argc >= 4 && strcmp(argv[1], "pnm") == 0) return pnm(argv[2], argc - 3, argv + 3);
  fprintf(stderr,
          "usage: decode bench [-raw] RUNS FILE...\n"
          "       decode spawn DJPEG RUNS WARMUP LIST...\n"
          "       decode pnm DJPEG LIST...\n");
  return 2;
}
