"""Counting rules of tools/data/hf_param_count.py for encoder models and the T5
encoder-decoder: bert and roberta, distilbert, albert, deberta-v2, t5 and mt5.

Each rule takes a Hugging Face config.json dict (the fixtures of tests/data/hf/ and the presets
of models/networks/), the head named in the CSV row and a Count, and follows the modeling file
it cites in github.com/huggingface/transformers (src/transformers/models/...) by hand."""
from hf_count_common import ConfigError, embedding, layernorm, linear, req, rmsnorm


# --------------------------------------------------------------------------- BERT family

def bert_layer(h, inter, attn_bias=True):
    """modeling_bert.py BertLayer: BertSelfAttention query/key/value Linear(h, h),
    BertSelfOutput dense Linear(h, h) + LayerNorm, BertIntermediate Linear(h, I),
    BertOutput Linear(I, h) + LayerNorm."""
    return (3 * linear(h, h, attn_bias) + linear(h, h) + layernorm(h)
            + linear(h, inter) + linear(inter, h) + layernorm(h))


def count_bert(cfg, head, c):
    """bert (modeling_bert.py) and roberta (modeling_roberta.py, same modules: RobertaEmbeddings
    has the same three tables, position table max_position_embeddings=514 incl. padding offset)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    t = req(cfg, "type_vocab_size", default=2)
    # BertEmbeddings: word_embeddings, position_embeddings, token_type_embeddings, LayerNorm
    c.add("embeddings", embedding(v, h) + embedding(p, h) + embedding(t, h) + layernorm(h))
    c.add("encoder (%d layers)" % n, n * bert_layer(h, inter))
    base = head.replace("Roberta", "Bert")
    if base in ("BertModel", "BertForPreTraining", "BertForSequenceClassification"):
        # BertModel(add_pooling_layer=True): BertPooler dense Linear(h, h) + tanh
        c.add("pooler", linear(h, h))
    if base in ("BertForMaskedLM", "BertForPreTraining"):
        # BertLMPredictionHead: transform dense Linear(h, h) + LayerNorm; decoder weight tied to
        # word_embeddings, its bias is a separate Parameter of vocab_size.  RobertaLMHead: dense,
        # layer_norm, decoder (tied) + bias - the same count.  BertForMaskedLM builds
        # BertModel(add_pooling_layer=False), so no pooler.
        c.add("mlm head (decoder tied)", linear(h, h) + layernorm(h) + v)
    if base == "BertForPreTraining":
        # BertPreTrainingHeads.seq_relationship Linear(h, 2)
        c.add("nsp head", linear(h, 2))
    if base == "BertForSequenceClassification":
        c.add("classifier", linear(h, cfg.get("num_labels", 2)))
    if base not in ("BertModel", "BertForMaskedLM", "BertForPreTraining",
                    "BertForSequenceClassification"):
        raise ConfigError("unsupported head %s" % head)


def count_distilbert(cfg, head, c):
    """modeling_distilbert.py: Embeddings word_embeddings, position_embeddings (an nn.Embedding
    also when sinusoidal_pos_embds: filled with sin/cos and requires_grad False, so it is a
    parameter that is never trained - counted here, as torch counts it), LayerNorm.
    TransformerBlock: MultiHeadSelfAttention q_lin/k_lin/v_lin/out_lin Linear(dim, dim),
    sa_layer_norm, FFN lin1 Linear(dim, hidden_dim), lin2 Linear(hidden_dim, dim),
    output_layer_norm.  No pooler."""
    d = req(cfg, "dim")
    n = req(cfg, "n_layers")
    hid = req(cfg, "hidden_dim")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    c.add("embeddings", embedding(v, d) + embedding(p, d) + layernorm(d))
    blk = 4 * linear(d, d) + layernorm(d) + linear(d, hid) + linear(hid, d) + layernorm(d)
    c.add("transformer (%d layers)" % n, n * blk)
    if head == "DistilBertForMaskedLM":
        # vocab_transform Linear(dim, dim), vocab_layer_norm, vocab_projector Linear(dim, V)
        # whose weight is tied to word_embeddings; its bias (V) is its own.
        c.add("mlm head (projector tied)", linear(d, d) + layernorm(d) + v)
    elif head != "DistilBertModel":
        raise ConfigError("unsupported head %s" % head)


def count_albert(cfg, head, c):
    """modeling_albert.py.  AlbertEmbeddings: word/position/token_type tables of
    embedding_size E (factorized embedding), LayerNorm(E).  AlbertTransformer:
    embedding_hidden_mapping_in Linear(E, H); albert_layer_groups = num_hidden_groups groups of
    inner_group_num AlbertLayers, SHARED by all num_hidden_layers layers (layer i uses group
    i // (num_hidden_layers / num_hidden_groups)), so parameters do not grow with depth.
    AlbertLayer: AlbertAttention query/key/value/dense Linear(H, H) + LayerNorm(H),
    ffn Linear(H, I), ffn_output Linear(I, H), full_layer_layer_norm LayerNorm(H)."""
    e = req(cfg, "embedding_size")
    h = req(cfg, "hidden_size")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    t = req(cfg, "type_vocab_size", default=2)
    groups = req(cfg, "num_hidden_groups", default=1)
    inner = req(cfg, "inner_group_num", default=1)
    c.add("embeddings (E=%d)" % e, embedding(v, e) + embedding(p, e) + embedding(t, e) + layernorm(e))
    c.add("embedding_hidden_mapping_in", linear(e, h))
    layer = 4 * linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h) + layernorm(h)
    c.add("shared layers (%d groups x %d)" % (groups, inner), groups * inner * layer)
    if head in ("AlbertModel", "AlbertForPreTraining"):
        c.add("pooler", linear(h, h))           # AlbertModel(add_pooling_layer=True)
    if head in ("AlbertForMaskedLM", "AlbertForPreTraining"):
        # AlbertMLMHead: LayerNorm(E), bias(V), dense Linear(H, E), decoder Linear(E, V) tied to
        # word_embeddings (decoder.bias = self.bias).  AlbertForMaskedLM uses
        # AlbertModel(add_pooling_layer=False).
        c.add("mlm head (decoder tied)", layernorm(e) + v + linear(h, e))
    if head == "AlbertForPreTraining":
        c.add("sop classifier", linear(h, 2))  # AlbertSOPHead classifier Linear(H, 2)
    if head not in ("AlbertModel", "AlbertForMaskedLM", "AlbertForPreTraining"):
        raise ConfigError("unsupported head %s" % head)


def count_deberta_v2(cfg, head, c):
    """modeling_deberta_v2.py.  DebertaV2Embeddings: word_embeddings (V x embedding_size,
    embedding_size defaults to hidden_size); position_embeddings only if position_biased_input
    (default True; deberta-v3 sets False); token_type_embeddings only if type_vocab_size > 0;
    embed_proj Linear(embedding_size, H, bias=False) only if they differ; LayerNorm(H).
    DebertaV2Layer = BERT layer (query_proj/key_proj/value_proj Linear(H, H, bias=True),
    SelfOutput dense + LayerNorm, Intermediate, Output + LayerNorm).  DisentangledSelfAttention
    adds pos_key_proj (c2p) / pos_query_proj (p2c) Linear(H, H) only when relative_attention and
    not share_att_key.  DebertaV2Encoder: rel_embeddings nn.Embedding(pos_ebd_size, H) with
    pos_ebd_size = 2*position_buckets if position_buckets > 0 else 2*max_relative_positions
    (max_relative_positions < 1 -> max_position_embeddings); LayerNorm(H) if "layer_norm" in
    norm_rel_ebd; ConvLayer (Conv1d(H, H, k) + LayerNorm) if conv_kernel_size > 0.
    DebertaV2Model has no pooler."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    esz = cfg.get("embedding_size") or h
    emb = embedding(v, esz)
    if cfg.get("position_biased_input", True):
        emb += embedding(p, esz)
    if cfg.get("type_vocab_size", 0) > 0:
        emb += embedding(cfg["type_vocab_size"], esz)
    if esz != h:
        emb += linear(esz, h, bias=False)
    c.add("embeddings", emb + layernorm(h))
    layer = bert_layer(h, inter)
    pos_att = cfg.get("pos_att_type") or []
    if isinstance(pos_att, str):
        pos_att = [x.strip() for x in pos_att.lower().split("|")]
    rel = cfg.get("relative_attention", False)
    if rel and not cfg.get("share_att_key", False):
        if "c2p" in pos_att:
            layer += linear(h, h)
        if "p2c" in pos_att:
            layer += linear(h, h)
    c.add("encoder (%d layers)" % n, n * layer)
    if rel:
        mrp = cfg.get("max_relative_positions", -1)
        if mrp < 1:
            mrp = p
        buckets = cfg.get("position_buckets", -1)
        size = 2 * buckets if buckets > 0 else 2 * mrp
        c.add("rel_embeddings (%d)" % size, embedding(size, h))
    if "layer_norm" in [x.strip() for x in str(cfg.get("norm_rel_ebd", "none")).lower().split("|")]:
        c.add("rel LayerNorm", layernorm(h))
    k = cfg.get("conv_kernel_size", 0)
    if k > 0:
        c.add("conv", h * h * k // cfg.get("conv_groups", 1) + h + layernorm(h))
    if head == "DebertaV2ForMaskedLM":
        # (legacy) DebertaV2LMPredictionHead: transform dense + LayerNorm, decoder tied, bias V
        c.add("mlm head (decoder tied)", linear(h, h) + layernorm(h) + v)
    elif head != "DebertaV2Model":
        raise ConfigError("unsupported head %s" % head)


# --------------------------------------------------------------------------- T5

def count_t5(cfg, head, c):
    """modeling_t5.py.  shared nn.Embedding(V, d_model), used by encoder and decoder.
    T5Block (encoder): T5LayerSelfAttention (T5Attention q, k, v Linear(d_model, inner),
    o Linear(inner, d_model), no biases, inner = num_heads*d_kv; relative_attention_bias
    nn.Embedding(relative_attention_num_buckets, num_heads) only in block 0,
    has_relative_attention_bias=bool(i == 0)) + layer_norm (T5LayerNorm: weight only);
    T5LayerFF: DenseReluDense wi Linear(d_model, d_ff), wo Linear(d_ff, d_model), no biases
    (gated-gelu: wi_0 and wi_1) + layer_norm.  Decoder blocks add T5LayerCrossAttention
    (EncDecAttention q, k, v, o without relative bias) + layer_norm.  encoder/decoder
    final_layer_norm.  T5ForConditionalGeneration.lm_head Linear(d_model, V, bias=False) is tied
    to shared when tie_word_embeddings (default True; t5 v1.0 checkpoints)."""
    d = req(cfg, "d_model")
    dff = req(cfg, "d_ff")
    dkv = req(cfg, "d_kv")
    nh = req(cfg, "num_heads")
    ne = req(cfg, "num_layers")
    nd = cfg.get("num_decoder_layers") or ne
    v = req(cfg, "vocab_size")
    buckets = cfg.get("relative_attention_num_buckets", 32)
    inner = nh * dkv
    attn = 3 * linear(d, inner, False) + linear(inner, d, False)
    gated = str(cfg.get("feed_forward_proj", "relu")).startswith("gated")
    ff = (2 if gated else 1) * linear(d, dff, False) + linear(dff, d, False)
    c.add("shared", embedding(v, d))
    enc = ne * (attn + rmsnorm(d) + ff + rmsnorm(d)) + buckets * nh + rmsnorm(d)
    c.add("encoder (%d blocks)" % ne, enc)
    if head == "T5EncoderModel":
        return
    dec = nd * (2 * (attn + rmsnorm(d)) + ff + rmsnorm(d)) + buckets * nh + rmsnorm(d)
    c.add("decoder (%d blocks)" % nd, dec)
    if head == "T5ForConditionalGeneration":
        if cfg.get("tie_word_embeddings", True):
            c.add("lm_head (tied)", 0)
        else:
            c.add("lm_head", linear(d, v, False))
    elif head != "T5Model":
        raise ConfigError("unsupported head %s" % head)
