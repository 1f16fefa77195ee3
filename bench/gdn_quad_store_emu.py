# Emulates store_state_frags_io16 (quad xor-shuffle transpose) against the 4-byte store layout.
def sel4(v,i):
    lo = v[1] if i&1 else v[0]; hi = v[3] if i&1 else v[2]; return hi if i&2 else lo
for K in (32,64,128):
  LD=K*2 if K<128 else K
  for key0 in (0, K) if LD>K else (0,):
    ref={}; new={}
    val=lambda lane,nt,j:(lane,nt,j)  # x[nt][j] of lane
    for lane in range(32):
        vr=lane>>2; cq=2*(lane&3)
        for nt in range(K//8):
            for hf in range(2):
                for e in range(2): ref[(vr+8*hf)*LD+key0+8*nt+cq+e]=val(lane,nt,2*hf+e)
    for g in range(K//32):
        for hf in range(2):
            IN=[[ (val(l,4*g+t,2*hf),val(l,4*g+t,2*hf+1)) for t in range(4)] for l in range(32)]
            send={s:[sel4(IN[l],(l&3)^s) for l in range(32)] for s in (1,2,3)}
            for l in range(32):
                q=l&3; vr=l>>2
                v=[sel4(IN[l],q)]+[send[s][l^s] for s in (1,2,3)]
                o=[sel4(v,q),sel4(v,q^1),sel4(v,q^2),sel4(v,q^3)]
                base=(vr+8*hf)*LD+key0+32*g+8*q
                for j in range(4):
                    for e in range(2):
                        a=base+2*j+e; assert a not in new; new[a]=o[j][e]
    assert new==ref,(K,key0)
    print("K",K,"LD",LD,"key0",key0,"ok",len(new),"elements")
