/*
 * model_config.c - a model's size from its Hugging Face config.json, read
 * with Jansson, for the FLOPs per token (6N + 12 L h s) of an ingested
 * log.  The parameter count is summed module by module as transformers
 * builds the model (version 5.24.0, read from its wheel):
 *  - llama, mistral (models/llama/modeling_llama.py:158-160, 220-229, 422;
 *    configuration_llama.py:68-89): embeddings V h; per layer q and o
 *    h x (heads hd), k and v h x (kv_heads hd) (+ biases with
 *    attention_bias), the gated MLP 3 h ffn (+ biases with mlp_bias), two
 *    RMSNorm weights 2h; the final norm h; an lm_head V h unless
 *    tie_word_embeddings (default false: configuration_llama.py:78,
 *    configuration_mistral.py:77);
 *  - qwen2 (models/qwen2/modeling_qwen2.py:41-43, 181-184, 410): as
 *    llama, with biases on q, k and v (not o); tie default false
 *    (configuration_qwen2.py:71);
 *  - gpt2 (models/gpt2/modeling_gpt2.py:104-108, 235-236, 252, 491-496):
 *    token and position embeddings (V + n_positions) h; per layer two
 *    LayerNorms 4h, c_attn 3h^2 + 3h, c_proj h^2 + h, the MLP
 *    2 h ffn + ffn + h (ffn = n_inner, default 4h); ln_f 2h; the lm_head
 *    tied (configuration_gpt2.py:102).
 * Mixture-of-experts configs and other model types are refused: their
 * FLOPs per token are not 6N (only the routed experts run).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"

/* Keys that mark a mixture-of-experts config (mixtral, qwen2_moe /
 * qwen3_moe, deepseek, dbrx, jamba ...). */
static const char *const moe_keys[] = {
	"num_local_experts", "num_experts", "n_routed_experts",
	"moe_num_experts", "num_experts_per_tok", NULL,
};

static int get_int(json_t *root, const char *key, int required,
		   double def, double *out, const char *path, char *err,
		   size_t errlen)
{
	json_t *v = json_object_get(root, key);
	if (!v || json_is_null(v)) {
		if (required) {
			snprintf(err, errlen, "%s: no \"%s\"; give the "
				 "model's config.json, or --params, --layers "
				 "and --width", path, key);
			return SD_ERR_INVALID;
		}
		*out = def;
		return SD_OK;
	}
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		snprintf(err, errlen, "%s: \"%s\" is not a whole number above "
			 "0; fix the file or give --params", path, key);
		return SD_ERR_INVALID;
	}
	*out = (double)json_integer_value(v);
	return SD_OK;
}

static int get_bool(json_t *root, const char *key, int def)
{
	json_t *v = json_object_get(root, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

int sd_ingest_model_config(const char *path, struct sd_train_fact *params,
			   struct sd_train_fact *layers,
			   struct sd_train_fact *width, char *err,
			   size_t errlen)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		return SD_ERR_IO;
	}
	json_error_t je;
	json_t *root = json_loadf(fp, 0, &je);
	fclose(fp);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: not a config.json: %s", path,
			 je.line, je.column, je.text);
		return SD_ERR_INVALID;
	}
	int rc = SD_ERR_INVALID;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "%s: not a config.json (a JSON object)",
			 path);
		goto done;
	}
	for (int i = 0; moe_keys[i]; i++)
		if (json_object_get(root, moe_keys[i]) &&
		    !json_is_null(json_object_get(root, moe_keys[i]))) {
			snprintf(err, errlen, "%s: \"%s\": a mixture-of-experts "
				 "model, whose FLOPs per token are not 6N; give "
				 "--params (the active parameters)", path,
				 moe_keys[i]);
			goto done;
		}
	const char *type =
		json_string_value(json_object_get(root, "model_type"));
	if (!type) {
		snprintf(err, errlen, "%s: no \"model_type\"; give --params, "
			 "--layers and --width", path);
		goto done;
	}
	double V, h, L, heads, kv, ffn, hd, n = 0, npos;
	if (!strcmp(type, "gpt2")) {
		if ((rc = get_int(root, "vocab_size", 1, 0, &V, path, err,
				  errlen)) ||
		    (rc = get_int(root, "n_embd", 1, 0, &h, path, err,
				  errlen)) ||
		    (rc = get_int(root, "n_layer", 1, 0, &L, path, err,
				  errlen)) ||
		    (rc = get_int(root, "n_positions", 1, 0, &npos, path, err,
				  errlen)) ||
		    (rc = get_int(root, "n_inner", 0, 4 * h, &ffn, path, err,
				  errlen)))
			goto done;
		rc = SD_ERR_INVALID;
		double layer = 4 * h + 3 * h * h + 3 * h + h * h + h +
			       2 * h * ffn + ffn + h;
		n = (V + npos) * h + L * layer + 2 * h;
		if (!get_bool(root, "tie_word_embeddings", 1))
			n += V * h;
	} else if (!strcmp(type, "llama") || !strcmp(type, "mistral") ||
		   !strcmp(type, "qwen2")) {
		if ((rc = get_int(root, "vocab_size", 1, 0, &V, path, err,
				  errlen)) ||
		    (rc = get_int(root, "hidden_size", 1, 0, &h, path, err,
				  errlen)) ||
		    (rc = get_int(root, "num_hidden_layers", 1, 0, &L, path,
				  err, errlen)) ||
		    (rc = get_int(root, "intermediate_size", 1, 0, &ffn, path,
				  err, errlen)) ||
		    (rc = get_int(root, "num_attention_heads", 1, 0, &heads,
				  path, err, errlen)) ||
		    (rc = get_int(root, "num_key_value_heads", 0, heads, &kv,
				  path, err, errlen)) ||
		    (rc = get_int(root, "head_dim", 0, floor(h / heads), &hd,
				  path, err, errlen)))
			goto done;
		rc = SD_ERR_INVALID;
		int qwen2 = !strcmp(type, "qwen2");
		double q = heads * hd, k = kv * hd;
		double attn = h * q + 2 * h * k + q * h;
		if (qwen2)
			attn += q + 2 * k;
		else if (get_bool(root, "attention_bias", 0))
			attn += q + 2 * k + h;
		double mlp = 3 * h * ffn;
		if (!qwen2 && get_bool(root, "mlp_bias", 0))
			mlp += 2 * ffn + h;
		n = V * h + L * (attn + mlp + 2 * h) + h;
		if (!get_bool(root, "tie_word_embeddings", 0))
			n += V * h;
	} else {
		snprintf(err, errlen, "%s: \"model_type\": \"%s\" is not one "
			 "shakedown counts (llama, mistral, qwen2, gpt2); give "
			 "--params, --layers and --width", path, type);
		goto done;
	}
	params->value = n;
	params->origin = SD_TRAIN_DERIVED;
	layers->value = L;
	layers->origin = SD_TRAIN_READ;
	width->value = h;
	width->origin = SD_TRAIN_READ;
	rc = SD_OK;
done:
	json_decref(root);
	return rc;
}
