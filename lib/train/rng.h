/*
 * rng.h - the training workload's random numbers, the same on every
 * machine: splitmix64 (a seeder and a 64-bit hash finaliser) and
 * xoshiro256** (Blackman and Vigna, public domain algorithms), uniform
 * integers without modulo bias, and normals by Marsaglia's polar method
 * (sqrt and log in double only).  Internal to lib/train/: the model's
 * initialisation (gpt.c) and the data sources (data.c) use it.
 */
#ifndef SD_TRAIN_RNG_H
#define SD_TRAIN_RNG_H

#include <math.h>
#include <stdint.h>

struct sd_rng {
	uint64_t s[4];
	int have_spare;
	double spare;
};

/* splitmix64's output function: a bijective 64-bit mix. */
static inline uint64_t sd_rng_fmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A hash of (seed, domain, x): distinct domains give unrelated streams. */
static inline uint64_t sd_rng_hash(uint64_t seed, uint64_t domain,
				   uint64_t x)
{
	return sd_rng_fmix(sd_rng_fmix(seed ^ domain) +
			   (x + 1) * 0x9e3779b97f4a7c15ull);
}

static inline void sd_rng_seed(struct sd_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		seed += 0x9e3779b97f4a7c15ull;
		r->s[i] = sd_rng_fmix(seed);
	}
	r->have_spare = 0;
	r->spare = 0;
}

static inline uint64_t sd_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: the next 64 random bits. */
static inline uint64_t sd_rng_next(struct sd_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = sd_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sd_rng_rotl(s[3], 45);
	return result;
}

/* Uniform integer in [0, n), n >= 1, by rejection (no modulo bias). */
static inline uint32_t sd_rng_below(struct sd_rng *r, uint32_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
	do
		x = sd_rng_next(r);
	while (x >= lim);
	return (uint32_t)(x % n);
}

/* Uniform double in (-1, 1), 53 bits. */
static inline double sd_rng_pm1(struct sd_rng *r)
{
	return (double)(sd_rng_next(r) >> 11) * (2.0 / 9007199254740992.0) -
	       1.0;
}

/* Standard normal (polar method; the second value is kept for the next
 * call). */
static inline double sd_rng_normal(struct sd_rng *r)
{
	double u, v, s;
	if (r->have_spare) {
		r->have_spare = 0;
		return r->spare;
	}
	do {
		u = sd_rng_pm1(r);
		v = sd_rng_pm1(r);
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	s = sqrt(-2.0 * log(s) / s);
	r->spare = v * s;
	r->have_spare = 1;
	return u * s;
}

#endif
