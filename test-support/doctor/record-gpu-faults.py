"""Recorder used once on an H100 (torch 2.11 + CUDA) to make fixtures/doctor/faults/gpu-item-sync*.

    OUT=dir python3 test-support/doctor/record-gpu-faults.py item-sync   # or: no-sync (the control)

The healthy and slow-getitem GPU fixtures came from a variant of it: data kept on the GPU and
selected by an index dataset, (width, batch) = (8192, 1024) for healthy and (1024, 64) with a 2 ms
sleep per __getitem__ and 2 DataLoader workers for slow-getitem, BF16 autocast in both.
Run from the repository root (it imports goodput.torch from python/).
"""
import os,sys,torch,torch.nn.functional as F
sys.path.insert(0,'python');c=sys.argv[1];o=os.environ['OUT']
os.environ['GOODPUT_STEP_LOG']=f'{o}/gpu-{c}.steps.json'
import goodput.torch as gt
gt.init();torch.manual_seed(0);d=torch.device('cuda');h=8192;b=1024
n=torch.nn.Sequential(torch.nn.Linear(1024,h),*[m for _ in range(4) for m in (torch.nn.ReLU(),torch.nn.Linear(h,h))],torch.nn.Linear(h,10)).to(d)
opt=torch.optim.SGD(n.parameters(),lr=0.01);m=gt.AdaptiveDataParallel(n,opt)
X=torch.randn(b*16,1024);Y=torch.randint(0,10,(b*16,))
L=gt.AdaptiveDataLoader(torch.utils.data.TensorDataset(X,Y),batch_size=b)
P=torch.profiler;A=[P.ProfilerActivity.CPU,P.ProfilerActivity.CUDA]
with P.profile(activities=A,schedule=P.schedule(wait=2,warmup=2,active=8),on_trace_ready=lambda p:p.export_chrome_trace(f'/tmp/gpu-{c}.json')) as p:
 for i,(x,y) in enumerate(L):
  if i>=12:break
  x,y=x.pin_memory().to(d,non_blocking=True),y.pin_memory().to(d,non_blocking=True)
  opt.zero_grad()
  with torch.autocast('cuda',dtype=torch.bfloat16):out=m(x);l=F.cross_entropy(out,y)
  m.backward(l);opt.step()
  if c=='item-sync':print(i,l.item(),(out.argmax(1)==y).float().mean().item(),file=open(os.devnull,'w'))
  p.step()
