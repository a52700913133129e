/*
 * train_math.h - the per-element arithmetic of the training workload's
 * GPU kernels (train_gpu.cu), as host-and-device inline functions, so that
 * a test built with the host C compiler (test/unit/unit_train_math.c)
 * checks each body against lib/train/gpt.c's CPU kernels.  The row-wise
 * reductions (means, variances, maxima, sums) are the kernels' own; what
 * each element does with them is here.  No CUDA types.
 */
#ifndef SD_NCCL_TRAIN_MATH_H
#define SD_NCCL_TRAIN_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define SD_TM_HD __host__ __device__ __forceinline__
#else
#define SD_TM_HD static inline
#endif

/* GELU, tanh approximation, as gpt.c writes it: x * sigmoid(2u), u =
 * sqrt(2/pi) (x + 0.044715 x^3). */
#define SD_TM_GELU_K0 0.7978845608028654f
#define SD_TM_GELU_K1 0.044715f

SD_TM_HD float sd_tm_gelu(float x)
{
	float u = SD_TM_GELU_K0 * (x + SD_TM_GELU_K1 * x * x * x);
	return x / (1.0f + expf(-2.0f * u));
}

/* dout * gelu'(x). */
SD_TM_HD float sd_tm_gelu_grad(float x, float dout)
{
	float u = SD_TM_GELU_K0 * (x + SD_TM_GELU_K1 * x * x * x);
	float du = SD_TM_GELU_K0 * (1.0f + 3.0f * SD_TM_GELU_K1 * x * x);
	float s = 1.0f / (1.0f + expf(-2.0f * u));
	return dout * (s + 2.0f * x * s * (1.0f - s) * du);
}

/* LayerNorm (eps 1e-5, biased variance): the row's rstd from its summed
 * squared deviations, one element's output, and one element's input
 * gradient from the row's two means (sum_d: mean of dy w, sum_dn: mean of
 * dy w n, n the normalised input). */
SD_TM_HD float sd_tm_ln_rstd(float sq_dev_sum, int C)
{
	return 1.0f / sqrtf(sq_dev_sum / C + 1e-5f);
}

SD_TM_HD float sd_tm_ln_out(float x, float mean, float rstd, float w, float b)
{
	return (x - mean) * rstd * w + b;
}

SD_TM_HD float sd_tm_ln_dx(float x, float dy, float w, float mean, float rstd,
			float sum_d, float sum_dn)
{
	float n = (x - mean) * rstd;
	return rstd * (dy * w - sum_d - n * sum_dn);
}

/* Softmax backward of one element: p (dp - sum_j p_j dp_j). */
SD_TM_HD float sd_tm_softmax_grad(float p, float dp, float dot)
{
	return p * (dp - dot);
}

/* Cross-entropy backward of one logit: (p - [j is the target]) scale. */
SD_TM_HD float sd_tm_ce_grad(float p, int is_target, float scale)
{
	return p * scale - (is_target ? scale : 0.0f);
}

/* One AdamW element, gpt.c's adamw_range: decoupled decay (decay = 1 -
 * lr wd, or 1), bias corrections folded into step_size and
 * inv_sqrt_bc2. */
SD_TM_HD void sd_tm_adamw(float *p, float *m, float *v, float g, float b1,
		       float b2, float eps, float decay, float step_size,
		       float inv_sqrt_bc2, float grad_scale)
{
	float gj = g * grad_scale;
	*m = b1 * *m + (1.0f - b1) * gj;
	*v = b2 * *v + (1.0f - b2) * gj * gj;
	*p = *p * decay - step_size * *m / (sqrtf(*v) * inv_sqrt_bc2 + eps);
}

/* fp32 to bf16 bits, round to nearest even, NaN kept a (quiet) NaN; and
 * back.  The kernels use CUDA's __float2bfloat16_rn, which rounds the
 * same way; this is its reference for the test. */
SD_TM_HD uint16_t sd_tm_bf16_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

SD_TM_HD float sd_tm_bf16_float(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif
