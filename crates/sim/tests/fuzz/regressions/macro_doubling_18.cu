// memplay-fuzz: kernel=k grid=1,1,1 block=32,1,1 dyn_smem=0 regs=0 args= buffers=a=1024 defines= device=h100 sampling=edges budget=default
#define X0 1
#define X1 X0+X0
#define X2 X1+X1
#define X3 X2+X2
#define X4 X3+X3
#define X5 X4+X4
#define X6 X5+X5
#define X7 X6+X6
#define X8 X7+X7
#define X9 X8+X8
#define X10 X9+X9
#define X11 X10+X10
#define X12 X11+X11
#define X13 X12+X12
#define X14 X13+X13
#define X15 X14+X14
#define X16 X15+X15
#define X17 X16+X16
#define X18 X17+X17
__global__ void k(int* a) { a[0] = X18; }
