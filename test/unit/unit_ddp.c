/*
 * unit_ddp.c - the DDP-style gradient buckets (lib/train/ddp.c): a table
 * of tensor sizes and caps, and the buckets PyTorch's
 * compute_bucket_assignment_by_size would make of them; then the real
 * models' tables, whose buckets must tile the gradient array.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "shakedown/backend.h"
#include "train/ddp.h"
#include "train/gpt.h"

struct row {
	const char *what;
	size_t counts[8]; /* elements per tensor, forward order; 0 ends */
	size_t first_cap, cap; /* bytes */
	const char *want; /* "first-last" per bucket, ready order */
};

static const struct row rows[] = {
	{ "one small tensor: one bucket", { 10 }, 1024, 4096, "0-0" },
	{ "all fit the first cap", { 10, 10, 10 }, 1024, 4096, "0-2" },
	{ "the first bucket closes at its cap (reached exactly)",
	  { 100, 100, 256 }, 1024, 4096, "2-2 0-1" },
	{ "a bucket closes once it holds at least its cap",
	  { 300, 300, 200, 100 }, 1024, 2048, "2-3 0-1" },
	{ "later buckets use the larger cap",
	  { 600, 600, 600, 600, 300 }, 1024, 4096, "4-4 2-3 0-1" },
	{ "a bucket takes the tensor that crosses its cap, however large",
	  { 10, 5000, 10 }, 64, 64, "1-2 0-0" },
	{ "the last bucket holds what is left, below its cap",
	  { 10, 10, 1000 }, 1024, 4096, "2-2 0-1" },
};

int main(void)
{
	char err[256];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct sd_gpt_tensor t[8];
		int nt = 0;
		size_t off = 0;
		while (nt < 8 && r->counts[nt]) {
			memset(&t[nt], 0, sizeof(t[nt]));
			snprintf(t[nt].name, sizeof(t[nt].name), "t%d", nt);
			t[nt].offset = off;
			t[nt].count = r->counts[nt];
			off += r->counts[nt];
			nt++;
		}
		struct sd_ddp_bucket b[8];
		int nb = 0;
		int rc = sd_ddp_buckets(t, nt, 4, r->first_cap, r->cap, b, 8,
					&nb, err, sizeof(err));
		char got[128] = "";
		size_t u = 0;
		for (int k = 0; k < nb; k++)
			u += (size_t)snprintf(got + u, sizeof(got) - u, "%s%d-%d",
					      k ? " " : "", b[k].first_tensor,
					      b[k].last_tensor);
		ok(rc == SD_OK && strcmp(got, r->want) == 0, "%s: %s (got %s)",
		   r->what, r->want, got);
	}

	/* not contiguous: refused, naming the tensor */
	struct sd_gpt_tensor gap[2] = { { .name = "a", .offset = 0, .count = 4 },
					{ .name = "b", .offset = 5, .count = 4 } };
	struct sd_ddp_bucket b[4];
	int nb;
	ok(sd_ddp_buckets(gap, 2, 4, 64, 64, b, 4, &nb, err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "tensor b does not start"),
	   "a gap between tensors is refused: %s", err);

	/* the models: the buckets tile the gradient array, in ready order */
	static const struct sd_gpt_config cfgs[2] = { SD_GPT_CONFIG_DEFAULT,
						      SD_GPT_CONFIG_TEST };
	static const int want_nb[2] = { 2, 1 };
	for (int k = 0; k < 2; k++) {
		struct sd_gpt *m = NULL;
		if (sd_gpt_create(&cfgs[k], &m, err, sizeof(err)) != SD_OK) {
			ok(0, "create the %s model: %s", k ? "test" : "default",
			   err);
			continue;
		}
		int nt;
		const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &nt);
		struct sd_ddp_bucket mb[1024];
		int n = 0;
		int rc = sd_ddp_buckets(t, nt, 4, SD_DDP_FIRST_BUCKET_BYTES,
					SD_DDP_BUCKET_CAP_BYTES, mb, 1024, &n,
					err, sizeof(err));
		size_t end = sd_gpt_n_params(m);
		int tiles = rc == SD_OK;
		for (int i = 0; tiles && i < n; i++) {
			tiles = mb[i].offset + mb[i].count == end;
			end = mb[i].offset;
		}
		ok(tiles && end == 0, "%s model: %d buckets tile its %zu "
		   "gradients from the end", k ? "test" : "default", n,
		   sd_gpt_n_params(m));
		is_int(n, want_nb[k], "%s model: %d buckets (1 MiB, then up to "
		       "25 MiB)", k ? "test" : "default", want_nb[k]);
		sd_gpt_destroy(m);
	}
	return done_testing();
}
