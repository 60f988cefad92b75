"""Counting rules of tools/data/hf_param_count.py for image models: Hugging Face vit and
clip_vision_model, and torchvision ResNets and ViTs (model_type torchvision_resnet /
torchvision_vit, configs written for this project in models/networks/).

Each rule takes a config.json dict, the head named in the CSV row and a Count, and follows the
modeling file it cites in github.com/huggingface/transformers (src/transformers/models/...) or
github.com/pytorch/vision (torchvision/models/...) by hand."""
from hf_count_common import ConfigError, conv2d, layernorm, linear, req


# --------------------------------------------------------------------------- vision

def vit_layer(h, inter, qkv_bias=True):
    """modeling_vit.py ViTLayer: layernorm_before, ViTSelfAttention query/key/value
    Linear(H, H, bias=qkv_bias), ViTSelfOutput dense Linear(H, H), layernorm_after,
    ViTIntermediate Linear(H, I), ViTOutput Linear(I, H)."""
    return (layernorm(h) + 3 * linear(h, h, qkv_bias) + linear(h, h) + layernorm(h)
            + linear(h, inter) + linear(inter, h))


def patch_encoder(cfg):
    """(hidden, layers, intermediate, channels, patch, patches) of a ViT-style config.json: the
    image cut into (image_size / patch_size)^2 patches."""
    ps = req(cfg, "patch_size")
    return (req(cfg, "hidden_size"), req(cfg, "num_hidden_layers"), req(cfg, "intermediate_size"),
            cfg.get("num_channels", 3), ps, (req(cfg, "image_size") // ps) ** 2)


def count_vit(cfg, head, c):
    """modeling_vit.py.  ViTEmbeddings: cls_token (H), mask_token only with use_mask_token
    (ViTModel default False), position_embeddings ((image_size/patch_size)^2 + 1) x H,
    ViTPatchEmbeddings.projection Conv2d(num_channels, H, patch, stride patch) with bias.
    Encoder layers; final layernorm.  ViTModel(add_pooling_layer=True) adds ViTPooler dense
    Linear(H, H) + tanh; ViTForImageClassification builds ViTModel(add_pooling_layer=False)
    and a classifier Linear(H, num_labels)."""
    h, n, inter, ch, ps, npatch = patch_encoder(cfg)
    c.add("embeddings", h + (npatch + 1) * h + conv2d(ch, h, ps))
    c.add("encoder (%d layers)" % n, n * vit_layer(h, inter, cfg.get("qkv_bias", True)))
    c.add("layernorm", layernorm(h))
    if head == "ViTModel":
        c.add("pooler", linear(h, h))
    elif head == "ViTForImageClassification":
        labels = len(cfg["id2label"]) if "id2label" in cfg else cfg.get("num_labels", 2)
        c.add("classifier", linear(h, labels))
    elif head != "ViTModel(add_pooling_layer=False)":
        raise ConfigError("unsupported head %s" % head)


def count_clip_vision(cfg, head, c):
    """modeling_clip.py.  CLIPVisionEmbeddings: class_embedding Parameter(H), patch_embedding
    Conv2d(num_channels, H, patch, stride patch, bias=False), position_embedding
    nn.Embedding(num_patches + 1, H).  CLIPVisionTransformer: pre_layrnorm, CLIPEncoder layers
    (CLIPAttention k_proj/v_proj/q_proj/out_proj Linear(H, H) with bias, layer_norm1, CLIPMLP
    fc1 Linear(H, I), fc2 Linear(I, H), layer_norm2), post_layernorm.  CLIPVisionModel has no
    projection; CLIPVisionModelWithProjection adds visual_projection Linear(H, projection_dim,
    bias=False)."""
    h, n, inter, ch, ps, npatch = patch_encoder(cfg)
    c.add("embeddings", h + conv2d(ch, h, ps, bias=False) + (npatch + 1) * h)
    c.add("pre_layrnorm", layernorm(h))
    layer = 4 * linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h) + layernorm(h)
    c.add("encoder (%d layers)" % n, n * layer)
    c.add("post_layernorm", layernorm(h))
    if head == "CLIPVisionModelWithProjection":
        c.add("visual_projection", linear(h, req(cfg, "projection_dim"), False))
    elif head != "CLIPVisionModel":
        raise ConfigError("unsupported head %s" % head)


def count_tv_resnet(cfg, head, c):
    """torchvision/models/resnet.py.  conv1 Conv2d(3, 64, 7, bias=False), bn1 BatchNorm2d(64)
    (weight + bias; running stats are buffers).  layer1..4 with widths 64, 128, 256, 512:
    BasicBlock (expansion 1): conv3x3 + bn, conv3x3 + bn; Bottleneck (expansion 4): conv1x1 to
    width, bn, conv3x3, bn, conv1x1 to 4*width, bn.  The first block of a stage gets a
    downsample conv1x1(inplanes, planes*expansion) + bn when stride != 1 or inplanes !=
    planes*expansion.  fc Linear(512*expansion, num_classes)."""
    block = req(cfg, "block")
    layers = req(cfg, "layers")
    ncls = req(cfg, "num_classes")
    if block not in ("basic", "bottleneck") or len(layers) != 4:
        raise ConfigError("block must be basic|bottleneck with 4 stages")
    exp = 1 if block == "basic" else 4
    bn = lambda ch: 2 * ch
    c.add("stem", conv2d(3, 64, 7, False) + bn(64))
    inplanes = 64
    for s, (planes, nblocks) in enumerate(zip((64, 128, 256, 512), layers)):
        stride = 1 if s == 0 else 2
        tot = 0
        for i in range(nblocks):
            if block == "basic":
                p = conv2d(inplanes, planes, 3, False) + bn(planes) + conv2d(planes, planes, 3, False) + bn(planes)
            else:
                p = (conv2d(inplanes, planes, 1, False) + bn(planes) + conv2d(planes, planes, 3, False)
                     + bn(planes) + conv2d(planes, planes * 4, 1, False) + bn(planes * 4))
            if i == 0 and (stride != 1 or inplanes != planes * exp):
                p += conv2d(inplanes, planes * exp, 1, False) + bn(planes * exp)
            inplanes = planes * exp
            tot += p
        c.add("layer%d (%d blocks)" % (s + 1, nblocks), tot)
    c.add("fc", linear(512 * exp, ncls))


def count_tv_vit(cfg, head, c):
    """torchvision/models/vision_transformer.py.  conv_proj Conv2d(3, H, patch, stride patch)
    with bias; class_token (H); encoder.pos_embedding ((image/patch)^2 + 1) x H; EncoderBlock:
    ln_1, nn.MultiheadAttention (in_proj_weight 3H x H, in_proj_bias 3H, out_proj Linear(H, H)),
    ln_2, MLPBlock Linear(H, mlp_dim), Linear(mlp_dim, H); encoder.ln; heads.head
    Linear(H, num_classes) (no representation layer for the ImageNet weights)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    img = req(cfg, "image_size")
    ps = req(cfg, "patch_size")
    ncls = req(cfg, "num_classes")
    npatch = (img // ps) ** 2
    c.add("conv_proj + class_token + pos_embedding", conv2d(3, h, ps) + h + (npatch + 1) * h)
    layer = layernorm(h) + 3 * h * h + 3 * h + linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h)
    c.add("encoder (%d layers)" % n, n * layer)
    c.add("encoder.ln", layernorm(h))
    c.add("heads.head", linear(h, ncls))
