"""train_llama.py: a Llama-style 1.2B model (Llama-3.2-1B's shape, random weights from a
LlamaConfig: nothing downloaded) trained in pure bf16 for a few timed steps, into DIR/runs.csv
and DIR/memory.csv: without checkpointing, with activation checkpointing (HF's
gradient_checkpointing_enable, one layer recomputed at a time), and as a LoRA fine-tune through
peft (r=16 on q_proj and v_proj, PEFT's default for Llama; the base frozen in bf16).

Each run: batch 4 x 2,048 tokens of random ids, labels = inputs (causal LM loss), SDPA
attention, torch.optim.AdamW (its default foreach path) over the trainable parameters, 3
warm-up steps then up to 10 timed ones. The run records name the epochcast preset of the same
shape (llama-3.2-1b, task lm, precision bf16).
"""
import common

SEQ = 2048
BATCH = 4
VARIANTS = [("full", 0, 0), ("ckpt", 1, 0), ("lora", 0, 16)]


def llama_config():
    """Llama-3.2-1B's published config.json values (meta-llama/Llama-3.2-1B)."""
    return dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0,
                rms_norm_eps=1e-5, tie_word_embeddings=True, hidden_act="silu")


def run_config(gpu, rel, ckpt, lora_r, batch=BATCH, seq=SEQ):
    cfg = dict(model="llama-3.2-1b", task="lm", gpu=gpu, num_gpus=1, strategy="single", precision="bf16",
               **rel, batch_per_gpu=batch, seq_len=seq, grad_accum=1, optimizer="adamw",
               checkpointing=ckpt, attention="sdpa", trainer="plain", data="synthetic")
    if lora_r:
        cfg.update(lora_r=lora_r, lora_targets="qv")
    return cfg


def build_model(torch, ckpt, lora_r):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(**llama_config())
    config._attn_implementation = "sdpa"
    old = torch.get_default_dtype()
    try:  # made in bf16 on the GPU at once; a torch that refuses a bf16 default: fp32, then cast
        torch.set_default_dtype(torch.bfloat16)
    except (TypeError, RuntimeError):
        pass
    try:
        with torch.device("cuda"):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(old)
    model = model.to(torch.bfloat16)
    model.config.use_cache = False
    if ckpt:
        try:  # the non-reentrant checkpoint, where this transformers can say so
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        except TypeError:
            model.gradient_checkpointing_enable()
    if lora_r:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=2 * lora_r, target_modules=["q_proj", "v_proj"],
                                                 lora_dropout=0.0, task_type="CAUSAL_LM"))
        if ckpt:
            model.enable_input_require_grads()
    model.train()
    return model


def builder(torch, ckpt, lora_r, batch, seq):
    def build():
        model = build_model(torch, ckpt, lora_r)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5)
        ids = torch.randint(0, llama_config()["vocab_size"], (batch, seq), device="cuda")

        def step():
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step
    return build


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    gpu, rel = common.device_name(args.dry_run), common.releases(args.dry_run)
    if args.dry_run:
        for name, ckpt, lora_r in VARIANTS:
            common.dry_train_run(args.out, "train_llama", f"llama-1b-{name}", run_config(gpu, rel, ckpt, lora_r), BATCH)
        return
    import torch
    budget = common.Budget(args.cap_s)
    for name, ckpt, lora_r in VARIANTS:
        if not budget.ok(20.0):
            common.write_memory(args.out, [dict(id=f"llama-1b-{name}", section="train_llama",
                                                status="skipped: time cap")])
            continue
        common.train_run(args.out, "train_llama", f"llama-1b-{name}", run_config(gpu, rel, ckpt, lora_r),
                         builder(torch, ckpt, lora_r, BATCH, SEQ), BATCH, warmup=3, steps=10, budget=budget)


if __name__ == "__main__":
    main()
