"""train_resnet.py: ResNet-50 (timm's resnet50, the torchvision v1.5 layout, random weights)
trained on synthetic 224 x 224 images with fp16 autocast and a GradScaler, NCHW and then
channels_last (model and input in torch.channels_last), into DIR/runs.csv and DIR/memory.csv.

Batch 128, SGD with momentum 0.9, cudnn.benchmark on (as NVIDIA's DeepLearningExamples run
it), one batch made on the GPU and reused (data=synthetic), 5 warm-up steps then up to 20
timed ones. timm stands in for torchvision, which the device machine may lack; the run
records name epochcast's resnet50 preset (the same layers).
"""
import common

BATCH, IMAGE = 128, 224
FORMATS = [("nchw", "contiguous"), ("nhwc", "channels_last")]


def run_config(gpu, rel, memory_format):
    return dict(model="resnet50", task="imagenet", gpu=gpu, num_gpus=1, strategy="single", precision="amp_fp16",
                **rel, batch_per_gpu=BATCH, image_size=IMAGE, grad_accum=1, optimizer="sgd",
                memory_format=memory_format, trainer="plain", data="synthetic")


def builder(torch, channels_last):
    def build():
        import timm
        model = timm.create_model("resnet50", pretrained=False, num_classes=1000).cuda()
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        model = model.to(memory_format=fmt)
        x = torch.randn(BATCH, 3, IMAGE, IMAGE, device="cuda").to(memory_format=fmt)
        y = torch.randint(0, 1000, (BATCH,), device="cuda")
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.cuda.amp.GradScaler()
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
        return step
    return build


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    gpu, rel = common.device_name(args.dry_run), common.releases(args.dry_run)
    if args.dry_run:
        for tag, mf in FORMATS:
            common.dry_train_run(args.out, "train_resnet", f"resnet50-{tag}-amp-fp16", run_config(gpu, rel, mf), BATCH)
        return
    import torch
    torch.backends.cudnn.benchmark = True
    budget = common.Budget(args.cap_s)
    for tag, mf in FORMATS:
        rid = f"resnet50-{tag}-amp-fp16"
        if not budget.ok(15.0):
            common.write_memory(args.out, [dict(id=rid, section="train_resnet", status="skipped: time cap")])
            continue
        common.train_run(args.out, "train_resnet", rid, run_config(gpu, rel, mf), builder(torch, tag == "nhwc"), BATCH,
                         warmup=5, steps=20, budget=budget)


if __name__ == "__main__":
    main()
